// Issue 30: the llama.cpp probe (src/engines/llamacpp-probe.ts) against the real engine, two
// generated models of different training contexts in one directory: each model's per-slot context (/props?model=ID), the
// slots, processing requests from /metrics, /tokenize, and the process's resident memory,
// which the publisher charges as the footprint (docs/rules/engines.md "A real llama.cpp engine").
import { afterAll, beforeAll, expect, it } from "vitest";
import { EngineProber } from "../../src/engines/index.js";
import { type LlamaEngineProcess, startLlamaEngineProcess } from "../helpers/llama-engine-process.js";

let engine: LlamaEngineProcess;
let prober: EngineProber;

beforeAll(async () => {
  engine = await startLlamaEngineProcess({
    models: { alpha: 1, beta: { seed: 2, context: 256 } },
    args: ["--parallel", "2", "--ctx", "1024"],
  });
  prober = new EngineProber("llamacpp", { baseUrl: engine.url });
});

afterAll(async () => {
  await prober?.close();
  expect(await engine?.stop()).toBe(0);
});

it("reads every model with its own context, the slots, the load and the resident memory", async () => {
  const idle = await prober.probe();
  expect(idle).toMatchObject({
    engine: "llamacpp",
    models: ["alpha", "beta"],
    // 1024 over 2 slots, and beta capped at its training context.
    contextLengths: { alpha: 512, beta: 256 },
    slots: 2,
    running: 0,
    waiting: 0,
    tokenize: true,
  });
  expect(idle.kvCacheUsage).toBeUndefined();
  // Two tiny models, llama.cpp and Node: tens of MiB at least, far below a card.
  expect(idle.residentMiB).toBeGreaterThan(30);
  expect(idle.residentMiB).toBeLessThan(4096);
  const running = fetch(`${engine.url}/completion`, {
    method: "POST",
    body: JSON.stringify({ model: "beta", prompt: "count slowly", n_predict: 400 }),
  });
  let busy = await prober.probe();
  for (let i = 0; i < 50 && busy.running === 0; i++) busy = await prober.probe();
  expect(busy.running).toBe(1);
  expect((await running).status).toBe(200);
});
