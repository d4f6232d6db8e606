// The publisher writes on change plus a slow heartbeat (docs/rules/binding.md §8,
// docs/rules/state.md §2.1), probing a real emulator over HTTP into a recording sink on an
// injected clock: an unchanged probe is not rewritten, a change (a load, an unload, ready
// flipping) is written at once, the heartbeat rewrites an unchanged state once heartbeatMs has
// passed, and a reader's mark that only a newer probe settles (a suspect mark) forces the next
// probe out.
import { afterEach, describe, expect, it } from "vitest";
import type { ProviderState } from "../core/index.js";
import { type EmulatorHandle, startEmulator } from "../emulator/index.js";
import { ProviderPublisher } from "./publisher.js";

const T0 = Date.parse("2026-06-11T00:00:00Z");

const open: { stop?(): Promise<void>; close?(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await (o.stop ?? o.close)?.call(o);
});

function recordingSink() {
  const writes: ProviderState[] = [];
  return {
    writes,
    publish: async (s: ProviderState) => {
      writes.push(structuredClone(s));
      return writes.length;
    },
    remove: async () => 0,
  };
}

async function emulator(port = 0): Promise<EmulatorHandle> {
  const e = await startEmulator({
    listen: `127.0.0.1:${port}`,
    vramMiB: 24563,
    models: { "qwen3:8b": 4863 },
    timeScale: 0.01,
    keepAlive: -1,
  });
  open.push(e);
  return e;
}

async function post(url: string, body: unknown): Promise<void> {
  const res = await fetch(url, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.text();
}

async function setup(more: Partial<ConstructorParameters<typeof ProviderPublisher>[0]> = {}) {
  const gpu = await emulator();
  const sink = recordingSink();
  const clock = { t: T0 };
  const publisher = new ProviderPublisher({
    sink,
    // The tests probe when they choose (probeNow); the clock moves only when they move it.
    intervalMs: 60_000,
    probeTimeoutMs: 2000,
    now: () => clock.t,
    ...more,
  });
  open.push(publisher);
  await publisher.setProviders([{ name: "gpu", endpoint: gpu.url, totalVramMiB: 24563 }]);
  /** Moves the clock on, probes, and returns the writes so far. */
  const probeAt = async (sinceT0Ms: number) => {
    clock.t = T0 + sinceT0Ms;
    await publisher.probeNow("gpu");
    return sink.writes;
  };
  return { gpu, sink, clock, publisher, probeAt };
}

describe("publishing on change plus a heartbeat", () => {
  it("does not rewrite a probe that changes nothing but lastProbedAt", async () => {
    const { probeAt, publisher } = await setup();
    expect(await probeAt(0)).toHaveLength(1);
    expect(await probeAt(10_000)).toHaveLength(1);
    const writes = await probeAt(20_000);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.lastProbedAt).toBe("2026-06-11T00:00:00Z");
    // The last published state is what the publisher reports, unchanged.
    expect(publisher.states()[0]!.lastProbedAt).toBe("2026-06-11T00:00:00Z");
    expect(publisher.stats).toEqual({ written: 1, skipped: 2 });
  });

  it("writes a change at once: a load, then an unload, between unchanged probes", async () => {
    const { gpu, probeAt } = await setup();
    await probeAt(0);
    await probeAt(10_000);
    await post(`${gpu.url}/api/generate`, { model: "qwen3:8b" });
    let writes = await probeAt(11_000);
    expect(writes.map((w) => w.lastProbedAt)).toEqual(["2026-06-11T00:00:00Z", "2026-06-11T00:00:11Z"]);
    expect(writes[1]!.loadedModels).toEqual(["qwen3:8b"]);
    expect(writes[1]!.loadedModelFootprintsMiB["qwen3:8b"]).toBeGreaterThan(0);
    expect(await probeAt(21_000)).toHaveLength(2);
    await post(`${gpu.url}/api/generate`, { model: "qwen3:8b", keep_alive: 0 });
    writes = await probeAt(22_000);
    expect(writes).toHaveLength(3);
    expect(writes[2]!.loadedModels).toEqual([]);
    expect(writes[2]!.availableModelFootprintsMiB).toEqual({ "qwen3:8b": 4863 });
  });

  it("writes ready flipping at once, and not an unready state that stays unready", async () => {
    const { gpu, probeAt } = await setup({ failureThreshold: 1 });
    await probeAt(0);
    const port = gpu.port;
    await gpu.close();
    let writes = await probeAt(10_000);
    expect(writes.map((w) => w.ready)).toEqual([true, false]);
    expect(await probeAt(20_000)).toHaveLength(2);
    await emulator(port);
    writes = await probeAt(30_000);
    expect(writes.map((w) => w.ready)).toEqual([true, false, true]);
    expect(writes[2]!.lastProbedAt).toBe("2026-06-11T00:00:30Z");
  });

  it("says when a provider's probes start and stop failing, long before it is published not ready", async () => {
    let changes = 0;
    const { gpu, probeAt, publisher } = await setup({ onFailingChange: () => changes++ });
    await probeAt(0);
    expect([...publisher.failingProviders()]).toEqual([]);
    const port = gpu.port;
    await gpu.close();
    const writes = await probeAt(10_000);
    // One failure: the state stays ready (the threshold is 3), but the provider is failing.
    expect(writes.map((w) => w.ready)).toEqual([true]);
    expect([...publisher.failingProviders()]).toEqual(["gpu"]);
    expect(changes).toBe(1);
    await probeAt(20_000);
    expect(changes).toBe(1);
    await emulator(port);
    await probeAt(30_000);
    expect([...publisher.failingProviders()]).toEqual([]);
    expect(changes).toBe(2);
  });

  it("rewrites an unchanged state once heartbeatMs has passed since the last write", async () => {
    const { probeAt } = await setup({ heartbeatMs: 25_000 });
    await probeAt(0);
    expect(await probeAt(10_000)).toHaveLength(1);
    expect(await probeAt(20_000)).toHaveLength(1);
    let writes = await probeAt(30_000);
    expect(writes.map((w) => w.lastProbedAt)).toEqual(["2026-06-11T00:00:00Z", "2026-06-11T00:00:30Z"]);
    // Counted from the heartbeat's own write, not from the first.
    expect(await probeAt(50_000)).toHaveLength(2);
    writes = await probeAt(55_000);
    expect(writes.map((w) => w.lastProbedAt).at(-1)).toBe("2026-06-11T00:00:55Z");
  });

  it("writes every probe with heartbeatMs 0, and refuses a heartbeat that would let readers go stale", async () => {
    const { probeAt } = await setup({ heartbeatMs: 0 });
    await probeAt(0);
    expect(await probeAt(10_000)).toHaveLength(2);
    const sink = recordingSink();
    expect(() => new ProviderPublisher({ sink, heartbeatMs: 5 * 60_000 })).toThrow(/heartbeatMs/);
    expect(() => new ProviderPublisher({ sink, heartbeatMs: -1 })).toThrow(/heartbeatMs/);
  });

  it("publishes the next probe after a suspect mark newer than the last published probe", async () => {
    const suspects = new Map<string, number>();
    const asked: string[] = [];
    const { probeAt } = await setup({
      publishNeeded: (last) => {
        asked.push(last.lastProbedAt);
        const since = suspects.get(last.name);
        return since !== undefined && !(Date.parse(last.lastProbedAt) > since);
      },
    });
    await probeAt(0);
    expect(await probeAt(10_000)).toHaveLength(1);
    // A sidecar found it unreachable 2 s after the last published probe: planners skip it
    // until a probe newer than that, so the next good probe goes out although nothing changed.
    suspects.set("gpu", T0 + 2_000);
    let writes = await probeAt(20_000);
    expect(writes.map((w) => w.lastProbedAt)).toEqual(["2026-06-11T00:00:00Z", "2026-06-11T00:00:20Z"]);
    // The mark is older than what is published now: back to skipping.
    writes = await probeAt(30_000);
    expect(writes).toHaveLength(2);
    // Asked only about probes that changed nothing, with the last published state.
    expect(asked).toEqual(["2026-06-11T00:00:00Z", "2026-06-11T00:00:00Z", "2026-06-11T00:00:20Z"]);
  });

  it("publishes an unchanged probe when asking whether it is needed fails", async () => {
    let failing = false;
    const { probeAt } = await setup({
      publishNeeded: () =>
        failing ? Promise.reject(new Error("state unavailable")) : Promise.resolve(false),
    });
    await probeAt(0);
    expect(await probeAt(10_000)).toHaveLength(1);
    failing = true;
    expect(await probeAt(20_000)).toHaveLength(2);
  });
});
