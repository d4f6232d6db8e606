// `bench scale`, engine_oversubscribed_max (docs/benchmarks.md "scale"): 8 sidecar processes on
// one nats-server race their agents' calls, through their Ollama proxies, at one emulated engine
// with one slot per copy and room for one of its two models at a time, so copies come and go and
// claims take both the guard and the warm path. A counting pass-through in front of the engine
// (instrumentation: it forwards every byte) records the most generation requests of one model
// the engine held at once; above its one slot is an oversubscription.
import { startEmulator } from "../../src/emulator/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { openStateStore } from "../../src/state/index.js";
import { countingPassThrough } from "../../test/helpers/counting-pass-through.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import { startSidecarProcess } from "../../test/helpers/sidecar-process.js";

const SIDECARS = 8;
const SLOTS = 1;
const modelOf = (i: number) => (i % 2 === 0 ? "m-a" : "m-b");

export interface SlotsResult {
  sidecars: number;
  slots: number;
  rounds: number;
  calls: number;
  failed_calls: number;
  /** Per round: the most calls of one model the engine ran above its slots. */
  oversubscribed_per_round: number[];
  oversubscribed_max: number;
}

export async function slotsRun(rounds = 3, callsEach = 4): Promise<SlotsResult> {
  const nats = await NatsServer.start();
  const emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { "m-a": 14000, "m-b": 14000 },
    contextLength: 8192,
    numParallel: SLOTS,
    timeScale: 0.02,
  });
  const front = await countingPassThrough(emulator.url);
  const operator = await openStateStore(nats.url);
  const publisher = new ProviderPublisher({ sink: operator.providerWriter, intervalMs: 60_000 });
  const per: number[] = [];
  let calls = 0;
  let failed = 0;
  try {
    publisher.start();
    await publisher.setProviders([
      { name: "solo", endpoint: front.url, totalVramMiB: 24563, maxParallel: SLOTS, contextLength: 8192 },
    ]);
    await publisher.probeNow();
    for (let r = 0; r < rounds; r++) {
      front.resetMost();
      const sidecars = await Promise.all(
        Array.from({ length: SIDECARS }, (_, i) =>
          startSidecarProcess(
            ["--nats", nats.url, "--agent", `crew/r${r}a${i}`, "--proxy-listen", "127.0.0.1:0"],
            { KUBEMOOT_MODEL_CANDIDATES_MULLING: `[{"model":"${modelOf(i)}","score":50}]` },
            { timeoutMs: 60_000 },
          ),
        ),
      );
      await Promise.all(
        sidecars.map(async (s, i) => {
          for (let k = 0; k < callsEach; k++) {
            const res = await fetch(`http://${s.proxyAddress}/api/chat`, {
              method: "POST",
              body: JSON.stringify({
                model: modelOf(i),
                messages: [{ role: "user", content: "hello" }],
                options: { num_predict: 20 },
                stream: false,
              }),
            });
            await res.text();
            calls++;
            if (res.status !== 200) failed++;
          }
        }),
      );
      await Promise.all(sidecars.map((s) => s.stop()));
      per.push(Math.max(0, ...[...front.most().values()].map((n) => n - SLOTS)));
    }
  } finally {
    await publisher.stop();
    await front.close();
    await emulator.close();
    await operator.close();
    await nats.dispose();
  }
  return {
    sidecars: SIDECARS,
    slots: SLOTS,
    rounds,
    calls,
    failed_calls: failed,
    oversubscribed_per_round: per,
    oversubscribed_max: Math.max(...per),
  };
}
