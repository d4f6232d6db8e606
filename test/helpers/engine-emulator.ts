// Helpers for tests of the emulator's engine personalities over HTTP: a start function that
// closes what it started after each test, and /metrics read with the product's Prometheus
// reader (src/engines/prom-text.ts).
import { afterEach } from "vitest";
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";
import { type PromSample, readPromSamples } from "../../src/engines/index.js";
import { waitFor } from "./emulator-http.js";

/**
 * Starts emulators on a free port with `defaults` (fast time, then the caller's options), each
 * closed after its test. Call once at module level: it registers the afterEach.
 */
export function emulatorStarter(
  defaults: EmulatorOptions,
): (options?: EmulatorOptions) => Promise<EmulatorHandle> {
  const open: EmulatorHandle[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
  });
  return async (options = {}) => {
    const emu = await startEmulator({ listen: "127.0.0.1:0", timeScale: 0.001, ...defaults, ...options });
    open.push(emu);
    return emu;
  };
}

/** The samples of GET /metrics (throws on a status other than 200). */
export async function scrape(url: string): Promise<PromSample[]> {
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return readPromSamples(await res.text());
}

/** Every sample of `name`. */
export function samples(all: readonly PromSample[], name: string): PromSample[] {
  return all.filter((s) => s.name === name);
}

/** The value of the first sample of `name` (throws when absent). */
export function value(all: readonly PromSample[], name: string): number {
  const s = all.find((x) => x.name === name);
  if (!s) throw new Error(`metric ${name} absent`);
  return s.value;
}

/** Polls GET /metrics until `ready` holds for its samples, and returns them. */
export async function scrapeUntil(
  url: string,
  ready: (all: readonly PromSample[]) => boolean,
): Promise<PromSample[]> {
  let last: PromSample[] = [];
  await waitFor(async () => {
    last = await scrape(url);
    return ready(last);
  });
  return last;
}
