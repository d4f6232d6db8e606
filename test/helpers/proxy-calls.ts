// Calls to the proxy under test (sidecar/proxy/*.test.ts): a fresh in-process harness per test
// (test/helpers/proxy-harness.ts), JSON and streaming requests against it, and the checks that
// nothing is left waiting or claimed.
import { expect } from "vitest";
import { waitFor } from "./emulator-http.js";
import { type Harness, type HarnessOptions, startHarness } from "./proxy-harness.js";

/** The harness of the running test (set by `harness()`). */
export let h: Harness;
const open: Harness[] = [];
export async function harness(o: HarnessOptions = {}): Promise<Harness> {
  h = await startHarness(o);
  open.push(h);
  return h;
}

/** Closes every harness the test started (each test file runs it after each test). */
export async function closeHarnesses(): Promise<void> {
  await Promise.all(open.splice(0).map((x) => x.close()));
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: () => Record<string, unknown>;
}

export async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Answer> {
  const res = await fetch(`${h.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** Starts a streaming call and resolves once its first bytes arrived; `abort` hangs up. */
export async function openStream(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ res: Response; first: string; abort: () => void; rest: Promise<string> }> {
  const ctl = new AbortController();
  const res = await fetch(`${h.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: ctl.signal,
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  const firstChunk = await reader.read();
  const first = dec.decode(firstChunk.value ?? new Uint8Array());
  const rest = (async () => {
    let text = "";
    try {
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        text += dec.decode(r.value);
      }
    } catch {
      // aborted
    }
    return text;
  })();
  return { res, first, abort: () => ctl.abort(), rest };
}

export const chat = (
  model: string,
  content = "Say something short.",
  extra: Record<string, unknown> = {},
) => ({
  model,
  messages: [{ role: "user", content }],
  ...extra,
});

export async function waitEntries(): Promise<number> {
  return (await h.state.demand.snapshot()).wait.length;
}

export async function noTickets(): Promise<void> {
  await waitFor(async () => (await h.tickets()).length === 0, 3000);
  expect(h.scheduler.activeTickets).toBe(0);
}
