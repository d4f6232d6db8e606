// The simulated fixed-model engine (continuous batching, no loads) and the mixed-fleet scenario
// (docs/rules/engines.md "Placement").
import { describe, expect, it } from "vitest";
import type { JobResult } from "../emulator/index.js";
import { POLICIES, simulate } from "./engine.js";
import { EventLoop } from "./events.js";
import { SimFixedEngine } from "./fixed-engine.js";
import { mixed } from "./scenarios.js";

function engine(loop: EventLoop, over: Partial<ConstructorParameters<typeof SimFixedEngine>[1]> = {}) {
  return new SimFixedEngine(loop, {
    name: "vllm",
    engine: "vllm",
    serves: ["m"],
    slots: 4,
    kvTokens: 10_000,
    slowdown: 0.5,
    contextLength: 8192,
    vramMiB: 46068,
    ...over,
  });
}

/** One 1000 ms call of "m" (which the engine serves, so it never fails): `done` sees its result. */
function runM(e: SimFixedEngine, done: (r: JobResult) => void = () => undefined, tokens?: number): void {
  e.run("m", 1000, done, () => undefined, tokens);
}

describe("SimFixedEngine", () => {
  it("runs a request alone at full speed, and two together each slower (the batch shares the GPU)", async () => {
    const loop = new EventLoop();
    const e = engine(loop);
    const done: number[] = [];
    runM(e, () => done.push(loop.now));
    loop.run();
    expect(done).toEqual([1000]);
    runM(e, () => done.push(loop.now));
    runM(e, () => done.push(loop.now));
    loop.run();
    // Two running at speed 1 / (1 + 0.5): 1500 ms each, together (throughput 1.33×).
    expect(done.slice(1)).toEqual([2500, 2500]);
  });

  it("queues past its slots, and when the KV cache is full", async () => {
    const loop = new EventLoop();
    const e = engine(loop, { slots: 2, slowdown: 0 });
    const results: JobResult[] = [];
    for (let i = 0; i < 3; i++) runM(e, (r) => results.push(r));
    expect([e.active, e.queued]).toEqual([2, 1]);
    loop.run();
    expect(results.map((r) => r.totalMs)).toEqual([1000, 1000, 2000]);
    expect(results.every((r) => !r.coldLoad)).toBe(true);

    const kv = engine(loop, { slots: 8, kvTokens: 5000, slowdown: 0 });
    runM(kv, undefined, 3000);
    runM(kv, undefined, 3000);
    expect([kv.active, kv.queued, kv.kvUsage]).toEqual([1, 1, 0.6]);
  });

  it("fails a model it does not serve (it loads nothing)", async () => {
    const loop = new EventLoop();
    const e = engine(loop);
    let failed = "";
    e.run(
      "other",
      1000,
      () => undefined,
      (m) => {
        failed = m;
      },
    );
    expect(failed).toMatch(/not served/);
  });
});

describe("the mixed scenario", () => {
  it.each(POLICIES)(
    "%s: runs every call, the engine's model only on the engine, nothing loaded there",
    async (policy) => {
      const r = await simulate({ scenario: mixed(), policy, seed: 1, record: true, measure: false });
      const done = (r.calls ?? []).filter((c) => c.outcome === "done");
      expect(done.length).toBeGreaterThan(0);
      for (const c of done) {
        if (c.model === "Qwen/Qwen3-14B") expect(c.provider).toBe("vllm-l40s");
        else expect(c.provider).toBe("ollama-4090");
      }
      expect((r.loads ?? []).every((l) => l.provider !== "vllm-l40s")).toBe(true);
      expect((r.unloads ?? []).every((u) => u.provider !== "vllm-l40s")).toBe(true);
    },
  );

  it("ours: a call goes to the engine only when a candidate names its model", async () => {
    const r = await simulate({ scenario: mixed(), policy: "ours", seed: 1, record: true, measure: false });
    const names = new Map(mixed().agents.map((a) => [a.id, a.candidates.map((c) => c.model)]));
    for (const d of r.decisions ?? []) {
      if (d.kind !== "claim") continue;
      expect(names.get(d.agent)).toContain(d.model);
      if (d.provider === "vllm-l40s") expect([d.cold, Object.keys(d.evicts).length]).toEqual([false, 0]);
    }
  });
});
