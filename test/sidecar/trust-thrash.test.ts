// Issue 16, item 5: two models that cannot share one 16 GiB card, two sidecar processes on a real
// nats-server, callers looping on both models through the proxies (plain fetch), on the real
// clock. Neither may thrash the card (an unload must pay for itself, and a copy keeps a few of
// its load times of residency), and neither may starve: a copy that its callers keep busy drains
// once it has served its residency, so the other model gets its turn (docs/rules/placement.md
// §5.1). Counts only, no timings: calls completed per model, and loads seen at the engine.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

const MODELS = ["alpha:7b", "beta:7b"];
let nats: NatsServer;
let store: StateStore;
let publisher: ProviderPublisher;
let gpu: EmulatorHandle;
const sidecars: SidecarProcess[] = [];
let loads = 0;
let sampler: NodeJS.Timeout | undefined;

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  gpu = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 16384,
    // ≈9 GiB each once loaded with its KV slab: usable 14336 MiB holds one.
    models: { "alpha:7b": 8000, "beta:7b": 8000 },
    contextLength: 8192,
    numParallel: 2,
    // 40 tokens at 100 tokens/s: 0.4 s calls; 8000 MiB at 8 GiB/s: ≈1 s loads.
    outputTokens: 40,
    tokensPerS: 100,
    loadMiBPerS: 8192,
    timeScale: 1,
  });
  publisher = new ProviderPublisher({ sink: store.providerWriter, intervalMs: 1_000 });
  publisher.start();
  await publisher.setProviders([
    { name: "gpu-16g", endpoint: gpu.url, totalVramMiB: 16384, maxParallel: 2, contextLength: 8192 },
  ]);
  await publisher.probeNow();
  for (let i = 0; i < 2; i++) {
    sidecars.push(
      await startSidecarProcess([
        "--nats",
        nats.url,
        "--agent",
        `crew/agent-${i}`,
        "--proxy-listen",
        "127.0.0.1:0",
      ]),
    );
  }
  // A load is a model appearing among the engine's runners.
  let seen = new Set<string>();
  sampler = setInterval(() => {
    const now = new Set(gpu.gpu().runners.map((r) => r.model));
    for (const m of now) if (!seen.has(m)) loads++;
    seen = now;
  }, 5);
});

afterAll(async () => {
  if (sampler) clearInterval(sampler);
  for (const s of sidecars) expect(await s.stop()).toBe(0);
  await publisher?.stop();
  await gpu?.close();
  await store?.close();
  await nats?.dispose();
});

it("two models that cannot share a card take turns on it: both are served, and the card does not thrash", async () => {
  const done = new Map(MODELS.map((m) => [m, 0]));
  const failed: string[] = [];
  const until = performance.now() + 14_000;
  const caller = async (proxy: string, model: string) => {
    while (performance.now() < until) {
      const res = await fetch(`http://${proxy}/api/chat`, {
        method: "POST",
        body: JSON.stringify({
          model,
          stream: false,
          messages: [{ role: "user", content: "Summarise the incident report in three lines." }],
        }),
        signal: AbortSignal.timeout(60_000),
      });
      await res.arrayBuffer();
      if (res.status === 200) done.set(model, done.get(model)! + 1);
      else {
        failed.push(`${model}: ${res.status} ${res.headers.get("x-kubemoot-reason") ?? ""}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  await Promise.all(
    sidecars.flatMap((s) => [0, 1, 2, 3, 4, 5].map((i) => caller(s.proxyAddress, MODELS[i % 2]!))),
  );
  const served = Object.fromEntries(done);
  // Neither model starves while the other's callers keep its copy busy: the card goes back and
  // forth (at least 3 loads: the first model, the second, the first again), and each model is
  // served. Without the drain rule the copy loaded first kept the card: 64 calls against 6, two
  // loads; with it 22 against 36 here and 44 against 8 on a loaded CI run, four loads each time.
  const detail = JSON.stringify({ served, loads, failed });
  expect(served["alpha:7b"], detail).toBeGreaterThanOrEqual(3);
  expect(served["beta:7b"], detail).toBeGreaterThanOrEqual(3);
  expect(loads, detail).toBeGreaterThanOrEqual(3);
  // Not per call either: every load served several calls.
  expect(loads * 4, JSON.stringify({ served, loads })).toBeLessThanOrEqual(
    served["alpha:7b"]! + served["beta:7b"]!,
  );
});
