// Slots fleet-wide (docs/rules/state.md §1, §6 "Slots"): 8 sidecar processes on one nats-server
// race their agents' calls, through their Ollama proxies, at one engine with one slot per copy
// and room for one of its two models at a time. A
// counting pass-through in front of the engine (test instrumentation: it forwards every byte)
// records how many generation requests the engine holds at once: never more than its one
// slot. Every call still succeeds: the extra ones wait in their sidecars.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { type CountingPassThrough, countingPassThrough } from "../helpers/counting-pass-through.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";

const SIDECARS = 8;
const CALLS_EACH = 2;
/** Half the agents call one model, half the other. */
const modelOf = (i: number) => (i % 2 === 0 ? "m-a" : "m-b");

describe("slots enforced across sidecars", () => {
  let nats: NatsServer;
  let emulator: EmulatorHandle;
  let front: CountingPassThrough;
  let operator: StateStore;
  let publisher: ProviderPublisher;
  const sidecars: SidecarProcess[] = [];

  beforeAll(async () => {
    nats = await NatsServer.start();
    emulator = await startEmulator({
      listen: "127.0.0.1:0",
      vramMiB: 24563,
      // Only one of the two fits at a time: calls of both make the copies come and go, and
      // claims go through the guard (loads, plans to unload the other) as well as warm.
      models: { "m-a": 14000, "m-b": 14000 },
      contextLength: 8192,
      numParallel: 1,
      timeScale: 0.02,
    });
    front = await countingPassThrough(emulator.url);
    operator = await openStateStore(nats.url);
    publisher = new ProviderPublisher({ sink: operator.providerWriter, intervalMs: 60_000 });
    publisher.start();
    await publisher.setProviders([
      { name: "solo", endpoint: front.url, totalVramMiB: 24563, maxParallel: 1, contextLength: 8192 },
    ]);
    await publisher.probeNow();
    const started = await Promise.all(
      Array.from({ length: SIDECARS }, (_, i) =>
        startSidecarProcess(["--nats", nats.url, "--agent", `crew/a${i}`, "--proxy-listen", "127.0.0.1:0"], {
          KUBEMOOT_MODEL_CANDIDATES_MULLING: `[{"model":"${modelOf(i)}","score":50}]`,
        }),
      ),
    );
    sidecars.push(...started);
  }, 90_000);

  afterAll(async () => {
    const codes = await Promise.all(sidecars.map((s) => s.stop()));
    await publisher?.stop();
    await front?.close();
    await emulator?.close();
    await operator?.close();
    await nats?.dispose();
    expect(codes.every((c) => c === 0)).toBe(true);
  });

  it(`${SIDECARS} sidecars' calls never run two at once on a one-slot copy`, async () => {
    const statuses: number[] = [];
    await Promise.all(
      sidecars.map(async (s) => {
        for (let k = 0; k < CALLS_EACH; k++) {
          const res = await fetch(`http://${s.proxyAddress}/api/chat`, {
            method: "POST",
            body: JSON.stringify({
              model: modelOf(sidecars.indexOf(s)),
              messages: [{ role: "user", content: "hello" }],
              options: { num_predict: 20 },
              stream: false,
            }),
          });
          await res.text();
          statuses.push(res.status);
        }
      }),
    );
    expect(statuses).toEqual(Array(SIDECARS * CALLS_EACH).fill(200));
    expect(Object.fromEntries(front.most())).toEqual({ "m-a:latest": 1, "m-b:latest": 1 });
  }, 120_000);
});
