import { describe, expect, it } from "vitest";
import { ManualClock, OllamaGpu, resolveModel } from "../emulator/index.js";
import { EventLoop, VirtualClock } from "./events.js";

describe("EventLoop", () => {
  it("runs events by virtual time, same-time events in the order they were scheduled", () => {
    const loop = new EventLoop();
    const seen: string[] = [];
    for (const [t, name] of [
      [30, "c"],
      [10, "a1"],
      [20, "b"],
      [10, "a2"],
      [10, "a3"],
    ] as const) {
      loop.at(t, () => seen.push(`${name}@${loop.now}`));
    }
    loop.run();
    expect(seen).toEqual(["a1@10", "a2@10", "a3@10", "b@20", "c@30"]);
  });

  it("cancels, clamps the past to now, schedules from inside events, and stops at `until`", () => {
    const loop = new EventLoop();
    const seen: string[] = [];
    const h = loop.at(5, () => seen.push("cancelled"));
    h.cancel();
    loop.at(10, () => {
      seen.push(`x@${loop.now}`);
      loop.at(3, () => seen.push(`past@${loop.now}`));
      loop.at(15, () => seen.push(`y@${loop.now}`));
    });
    loop.at(100, () => seen.push("late"));
    loop.run(50);
    expect(seen).toEqual(["x@10", "past@10", "y@15"]);
    expect(loop.now).toBe(50);
    loop.run();
    expect(seen.at(-1)).toBe("late");
  });

  it("drives the emulator's Ollama model exactly like the emulator's ManualClock does", () => {
    const catalog = new Map([
      ["a:1b", resolveModel({ name: "a:1b", onDiskMiB: 1024, kvMiBPerToken: 0.125 })],
      ["b:2b", resolveModel({ name: "b:2b", onDiskMiB: 2048, kvMiBPerToken: 0.125 })],
    ]);
    const cfg = {
      vramMiB: 3000,
      numParallel: 1,
      contextLength: 4096,
      loadMiBPerS: 1024,
      unloadMs: 1000,
      tokensPerS: 10,
      promptTokensPerS: 1000,
      maxQueue: 100,
      maxLoadedModels: 3,
      keepAliveMs: 300_000,
    };
    const script = [
      { at: 0, model: "a:1b" },
      { at: 100, model: "a:1b" },
      { at: 200, model: "b:2b" },
    ];
    const trace = (clock: { at(t: number, fn: () => void): unknown; now(): number }, gpu: OllamaGpu) => {
      const done: string[] = [];
      script.forEach((s, i) => {
        clock.at(s.at, () => {
          gpu.submit(
            { model: s.model, numCtx: 4096, kind: "infer", promptTokens: 500, outputTokens: 5 },
            {
              onDone: (r) => done.push(`${i}:${clock.now()}:${r.loadMs}`),
              onError: () => done.push(`${i}:err`),
            },
          );
        });
      });
      return done;
    };
    const manual = new ManualClock(0);
    const viaManual = trace(manual, new OllamaGpu(cfg, catalog, manual, 4096));
    manual.runAll();
    const loop = new EventLoop();
    const virtual = new VirtualClock(loop, 0);
    const viaLoop = trace(virtual, new OllamaGpu(cfg, catalog, virtual, 4096));
    loop.run();
    expect(viaLoop).toEqual(viaManual);
    expect(viaLoop).toHaveLength(3);
  });
});
