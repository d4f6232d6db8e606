import { describe, expect, it } from "vitest";
import { resolveModel } from "./catalog.js";
import { type Clock, ManualClock } from "./clock.js";
import { OllamaGpu } from "./gpu.js";
import type { GpuConfig, JobResult, JobSpec } from "./gpu-types.js";

// Three models with round numbers: load 1 s per GiB at 1024 MiB/s, KV 0.125 MiB/token, so at
// num_ctx 4096 and one slot each KV slab is 512 MiB.
const catalog = new Map(
  [
    { name: "a:1b", onDiskMiB: 1024, kvMiBPerToken: 0.125 },
    { name: "b:2b", onDiskMiB: 2048, kvMiBPerToken: 0.125 },
    { name: "c:3b", onDiskMiB: 3072, kvMiBPerToken: 0.125 },
    // Its own prompt rate: ten times the emulator's.
    { name: "fast:1b", onDiskMiB: 1024, kvMiBPerToken: 0.125, promptTokensPerS: 10_000 },
  ].map((m) => {
    const spec = resolveModel(m);
    return [spec.name, spec] as const;
  }),
);

function setup(over: Partial<GpuConfig> = {}) {
  const clock = new ManualClock();
  const config = gpuConfig(over);
  const gpu = new OllamaGpu(config, catalog, clock, config.contextLength);
  return { clock, gpu };
}

function gpuConfig(over: Partial<GpuConfig> = {}): GpuConfig {
  return {
    vramMiB: 6000,
    numParallel: 1,
    contextLength: 4096,
    loadMiBPerS: 1024,
    unloadMs: 1000,
    tokensPerS: 10,
    promptTokensPerS: 1000,
    maxQueue: 512,
    maxLoadedModels: 3,
    keepAliveMs: 300_000,
    ...over,
  };
}

interface Record {
  startedAt?: number;
  doneAt?: number;
  result?: JobResult;
  error?: { message: string; status: number };
  tokens: number;
}

function submit(
  env: ReturnType<typeof setup>,
  over: Partial<JobSpec> & { model: string },
): { rec: Record; cancel: () => void } {
  const rec: Record = { tokens: 0 };
  const spec: JobSpec = {
    numCtx: 4096,
    kind: "infer",
    promptTokens: 100,
    outputTokens: 10,
    ...over,
  };
  const r = env.gpu.submit(spec, {
    onStart: () => {
      rec.startedAt = env.clock.now();
    },
    onTokens: (_first, count) => {
      rec.tokens += count;
    },
    onDone: (result) => {
      rec.doneAt = env.clock.now();
      rec.result = result;
    },
    onError: (message, status) => {
      rec.error = { message, status };
    },
  });
  if (!r.ok) {
    rec.error = { message: r.message, status: r.status };
    return { rec, cancel: () => {} };
  }
  return { rec, cancel: r.job.cancel };
}

/** Long enough for any job here, shorter than every keep_alive in these tests. */
const settle = (env: ReturnType<typeof setup>) => env.clock.advance(20_000);

const names = (env: ReturnType<typeof setup>) =>
  env.gpu
    .snapshot()
    .runners.map((r) => `${r.model}:${r.state}`)
    .sort();

describe("OllamaGpu", () => {
  it("cold-loads at loadMiBPerS, then evaluates the prompt and streams at tokensPerS", () => {
    const env = setup();
    const { rec } = submit(env, { model: "a:1b" });
    expect(names(env)).toEqual(["a:1b:loading"]);
    expect(env.gpu.usedMiB()).toBe(1024 + 512); // VRAM is reserved from the start of the load
    settle(env);
    expect(rec.startedAt).toBe(1000);
    expect(rec.tokens).toBe(10);
    expect(rec.doneAt).toBe(1000 + 100 + 1000);
    expect(rec.result).toMatchObject({
      loadMs: 1000,
      promptEvalMs: 100,
      evalMs: 1000,
      totalMs: 2100,
      promptTokens: 100,
      evalTokens: 10,
      coldLoad: true,
    });
  });

  it("evaluates a model's prompt at its own rate when it has one", () => {
    const env = setup();
    const { rec } = submit(env, { model: "fast:1b" });
    settle(env);
    // Load 1000 ms, 100 prompt tokens at 10 000 tokens/s, 10 tokens at 10 tokens/s.
    expect(rec.doneAt).toBe(1000 + 10 + 1000);
    expect(rec.result).toMatchObject({ promptEvalMs: 10, evalMs: 1000, totalMs: 2010 });
  });

  it("reuses a loaded model: no load time", () => {
    const env = setup();
    submit(env, { model: "a:1b" });
    settle(env);
    const t0 = env.clock.now();
    const { rec } = submit(env, { model: "a:1b", promptTokens: 0, outputTokens: 3 });
    settle(env);
    expect(rec.result?.loadMs).toBe(0);
    expect(rec.result?.coldLoad).toBe(false);
    expect(rec.doneAt).toBe(t0 + 300);
  });

  it("counts no load time for a loaded model however long the host takes to place the request", () => {
    // Every clock read costs 50 emulated ms while `slow`: a host descheduled at a small time
    // scale. The emulator's own running time must not read as loading.
    const inner = new ManualClock();
    let slow = false;
    let lost = 0;
    const clock: Clock = {
      scale: 1,
      now: () => {
        if (slow) lost += 50;
        return inner.now() + lost;
      },
      at: (at, fn) => inner.at(at - lost, fn),
      wallTimeOf: (t) => inner.wallTimeOf(t - lost),
      dispose: () => inner.dispose(),
    };
    const env = { clock: inner, gpu: new OllamaGpu(gpuConfig(), catalog, clock, 4096) };
    submit(env, { model: "a:1b" });
    settle(env);
    slow = true;
    const { rec } = submit(env, { model: "a:1b", promptTokens: 0, outputTokens: 3 });
    slow = false;
    settle(env);
    expect(rec.result?.coldLoad).toBe(false);
    expect(rec.result?.loadMs).toBe(0);
  });

  it("serves one slot's requests in arrival order, and num_parallel at a time", () => {
    const env = setup();
    const recs = [0, 1, 2].map(() => submit(env, { model: "a:1b", promptTokens: 0 }).rec);
    expect(env.gpu.queueDepth()).toBe(3);
    settle(env);
    expect(recs.map((r) => r.doneAt)).toEqual([2000, 3000, 4000]);

    const par = setup({ numParallel: 2 });
    const two = [0, 1, 2].map(() => submit(par, { model: "a:1b", promptTokens: 0 }).rec);
    settle(par);
    expect(two.map((r) => r.doneAt)).toEqual([2000, 2000, 3000]);
    // Two slots double the KV slab.
    expect(par.gpu.snapshot().runners[0]?.kvMiB).toBe(1024);
  });

  it("refuses past maxQueue with Ollama's 503 message", () => {
    const env = setup({ maxQueue: 2 });
    submit(env, { model: "a:1b" });
    settle(env);
    submit(env, { model: "a:1b" }); // running
    env.clock.advance(1);
    submit(env, { model: "a:1b" });
    submit(env, { model: "a:1b" });
    const { rec } = submit(env, { model: "a:1b" });
    expect(rec.error).toEqual({
      status: 503,
      message: "server busy, please try again.  maximum pending requests exceeded",
    });
  });

  it("evicts the idle model with the shortest remaining keep_alive when a new one does not fit", () => {
    const env = setup();
    submit(env, { model: "a:1b", keepAliveMs: 600_000 });
    submit(env, { model: "b:2b", keepAliveMs: 60_000 });
    settle(env);
    // a+b = 1536 + 2560 = 4096; c needs 3584 of 6000: one must go, b expires sooner.
    const { rec } = submit(env, { model: "c:3b" });
    expect(names(env)).toEqual(["a:1b:ready", "b:2b:unloading"]);
    env.clock.advance(1000);
    expect(names(env)).toEqual(["a:1b:ready", "c:3b:loading"]);
    settle(env);
    expect(rec.result?.loadMs).toBe(1000 + 3000);
  });

  it("evicts only idle models: waits for a busy one, in order", () => {
    const env = setup();
    submit(env, { model: "a:1b", keepAliveMs: 60_000 });
    submit(env, { model: "b:2b", keepAliveMs: 600_000 });
    settle(env);
    // a is busy for 1.1 s; b is idle though it has the longer keep_alive: b is the victim.
    submit(env, { model: "a:1b" });
    submit(env, { model: "c:3b" });
    expect(names(env)).toContain("b:2b:unloading");
    expect(names(env)).toContain("a:1b:ready");

    // Both busy: c must wait for one to become idle.
    const env2 = setup();
    submit(env2, { model: "a:1b" });
    submit(env2, { model: "b:2b" });
    env2.clock.runUntil(2000);
    submit(env2, { model: "a:1b", outputTokens: 50 }); // busy until ~7.1 s
    submit(env2, { model: "b:2b", outputTokens: 20 }); // busy until ~4.1 s
    const { rec: c } = submit(env2, { model: "c:3b" });
    const { rec: behind } = submit(env2, { model: "a:1b", outputTokens: 1, promptTokens: 0 });
    env2.clock.runUntil(4000);
    expect(names(env2)).toEqual(["a:1b:ready", "b:2b:ready"]);
    settle(env2);
    expect(c.result?.coldLoad).toBe(true);
    // The request behind c waited for c's placement (in-order scheduling).
    expect(behind.startedAt).toBeGreaterThan(5000);
  });

  it("reloads a model whose num_ctx differs, once it is idle", () => {
    const env = setup();
    submit(env, { model: "a:1b" });
    settle(env);
    const { rec } = submit(env, { model: "a:1b", numCtx: 8192 });
    expect(names(env)).toEqual(["a:1b:unloading"]);
    settle(env);
    expect(rec.result?.loadMs).toBe(1000 + 1000);
    expect(rec.result?.coldLoad).toBe(true);
    const r = env.gpu.snapshot().runners[0];
    expect(r?.numCtx).toBe(8192);
    expect(r?.footprintMiB).toBe(1024 + 1024);
  });

  it("unloads an idle model when its keep_alive runs out; 0 unloads at once; forever never", () => {
    const env = setup();
    submit(env, { model: "a:1b", keepAliveMs: 5000 });
    env.clock.runUntil(2100);
    expect(env.gpu.snapshot().runners[0]?.expiresAt).toBe(7100);
    env.clock.runUntil(7099);
    expect(names(env)).toEqual(["a:1b:ready"]);
    env.clock.runUntil(7100);
    expect(names(env)).toEqual(["a:1b:unloading"]);
    env.clock.runUntil(8100);
    expect(names(env)).toEqual([]);

    const zero = setup();
    submit(zero, { model: "a:1b", keepAliveMs: 0 });
    zero.clock.runUntil(2100);
    expect(names(zero)).toEqual(["a:1b:unloading"]);

    const forever = setup();
    submit(forever, { model: "a:1b", keepAliveMs: Number.POSITIVE_INFINITY });
    forever.clock.runAll();
    forever.clock.advance(1e9);
    expect(names(forever)).toEqual(["a:1b:ready"]);
    expect(forever.gpu.snapshot().runners[0]?.expiresAt).toBe(Number.POSITIVE_INFINITY);
  });

  it("expire() unloads an idle model now and a busy one when it is done", () => {
    const env = setup();
    submit(env, { model: "a:1b" });
    env.clock.runUntil(1500);
    expect(env.gpu.expire("a:1b")).toBe(true);
    expect(names(env)).toEqual(["a:1b:ready"]);
    env.clock.runUntil(2100);
    expect(names(env)).toEqual(["a:1b:unloading"]);
    expect(env.gpu.expire("b:2b")).toBe(false);
  });

  it("a load-only request completes when the model is resident and takes no slot", () => {
    const env = setup();
    const { rec: busy } = submit(env, { model: "a:1b" });
    const { rec: load } = submit(env, { model: "a:1b", kind: "load", promptTokens: 0, outputTokens: 0 });
    env.clock.runUntil(1000);
    expect(load.result?.loadMs).toBe(1000);
    expect(busy.doneAt).toBeUndefined();
  });

  it("a cancelled request frees its slot; a cancelled lone load is aborted", () => {
    const env = setup();
    submit(env, { model: "a:1b" });
    settle(env);
    const first = submit(env, { model: "a:1b", outputTokens: 100 });
    const { rec: second } = submit(env, { model: "a:1b", promptTokens: 0, outputTokens: 1 });
    env.clock.advance(500);
    first.cancel();
    expect(env.gpu.activeCount()).toBe(1);
    settle(env);
    expect(second.tokens).toBe(1);

    const abort = setup();
    const lone = submit(abort, { model: "c:3b" });
    abort.clock.advance(100);
    lone.cancel();
    expect(names(abort)).toEqual(["c:3b:unloading"]);
    abort.clock.advance(1000);
    expect(abort.gpu.usedMiB()).toBe(0);
  });

  it("fails a model that cannot fit even on an empty GPU", () => {
    const env = setup({ vramMiB: 2000 });
    const { rec } = submit(env, { model: "b:2b" });
    expect(rec.error?.status).toBe(500);
    expect(rec.error?.message).toMatch(/requires more memory/);
    const { rec: ok } = submit(env, { model: "a:1b" });
    settle(env);
    expect(ok.result).toBeDefined();
  });

  it("caps the loaded models at maxLoadedModels", () => {
    const env = setup({ maxLoadedModels: 1 });
    submit(env, { model: "a:1b" });
    settle(env);
    const { rec } = submit(env, { model: "b:2b" });
    expect(names(env)).toEqual(["a:1b:unloading"]);
    settle(env);
    expect(rec.result?.coldLoad).toBe(true);
    expect(names(env)).toEqual(["b:2b:ready"]);
  });

  it("a stall holds the slot until cancelled", () => {
    const env = setup();
    const stalled = submit(env, { model: "a:1b", stall: { afterTokens: 2, ms: Number.POSITIVE_INFINITY } });
    const { rec: next } = submit(env, { model: "a:1b", promptTokens: 0, outputTokens: 1 });
    env.clock.advance(100_000);
    expect(stalled.rec.tokens).toBe(2);
    expect(next.startedAt).toBeUndefined();
    stalled.cancel();
    settle(env);
    expect(next.tokens).toBe(1);
  });

  it("effective num_ctx: request, else default, clamped to the model's maximum", () => {
    const env = setup();
    expect(env.gpu.effectiveNumCtx("a:1b")).toBe(4096);
    expect(env.gpu.effectiveNumCtx("a:1b", 2048)).toBe(2048);
    expect(env.gpu.effectiveNumCtx("a:1b", 10_000_000)).toBe(131_072);
    expect(env.gpu.effectiveNumCtx("a:1b", 1)).toBe(4);
  });

  it("reset fails every request and frees the GPU at once", () => {
    const env = setup();
    const recs = [submit(env, { model: "a:1b" }).rec, submit(env, { model: "b:2b" }).rec];
    env.gpu.reset();
    expect(recs.map((r) => r.error?.message)).toEqual(["emulator reset", "emulator reset"]);
    expect(env.gpu.usedMiB()).toBe(0);
    settle(env);
    expect(recs.every((r) => r.result === undefined)).toBe(true);
  });
});
