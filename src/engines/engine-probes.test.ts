// Each engine's probe against the emulator's personality of that engine, over HTTP: models,
// context, slots, running and waiting requests and KV-cache usage under load (both vLLM
// metric generations, llama.cpp with and without its old KV gauge), /tokenize; and a wrong
// engine declared, named as such, while a server that is down is not called a mismatch.
import { afterEach, describe, expect, it } from "vitest";
import { postJson, waitFor } from "../../test/helpers/emulator-http.js";
import { type EmulatorHandle, type EmulatorOptions, ManualClock, startEmulator } from "../emulator/index.js";
import { EngineHttp } from "./engine-http.js";
import { EngineMismatchError, type EngineProbe, type FixedEngine } from "./engine-probe.js";
import { EngineProber, mismatchOr } from "./engine-prober.js";
import { EngineError } from "./errors.js";
import { OllamaClient } from "./ollama-client.js";

const open: { close(): Promise<void> }[] = [];
async function emulator(options: EmulatorOptions): Promise<EmulatorHandle> {
  const emu = await startEmulator({
    listen: "127.0.0.1:0",
    models: { "qwen3:8b": 4863 },
    timeScale: 0.001,
    outputTokens: 30,
    ...options,
  });
  open.push(emu);
  return emu;
}
function prober(engine: FixedEngine, url: string): EngineProber {
  const p = new EngineProber(engine, { baseUrl: url, timeoutMs: 2000 });
  open.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

const ask = (i: number) => ({ model: "qwen3:8b", messages: [{ role: "user", content: `question ${i}` }] });

/** Four calls on two slots, held by a manual clock: two run, two wait. */
async function underLoad(
  engine: FixedEngine,
  options: EmulatorOptions,
): Promise<{ idle: EngineProbe; busy: EngineProbe; release: () => Promise<void> }> {
  const clock = new ManualClock();
  const emu = await emulator({ engine: engine as EmulatorOptions["engine"], clock, slots: 2, ...options });
  const p = prober(engine, emu.url);
  const idle = await p.probe();
  const calls = [1, 2, 3, 4].map((i) => postJson(`${emu.url}/v1/chat/completions`, ask(i)));
  const busy = (await waitFor(async () => {
    const now = await p.probe();
    return now.running === 2 && now.waiting === 2 ? now : undefined;
  })) as EngineProbe;
  clock.advance(300);
  return {
    idle,
    busy,
    release: async () => {
      clock.runAll();
      expect((await Promise.all(calls)).map((c) => c.status)).toEqual([200, 200, 200, 200]);
    },
  };
}

describe("probing each engine's personality", () => {
  it("vLLM (current metric names): model, max_model_len, running, waiting, KV cache, /tokenize", async () => {
    const { idle, busy, release } = await underLoad("vllm", { contextLength: 8192 });
    expect(idle).toEqual({
      engine: "vllm",
      models: ["qwen3:8b"],
      contextLengths: { "qwen3:8b": 8192 },
      running: 0,
      waiting: 0,
      kvCacheUsage: 0,
      tokenize: true,
    });
    expect(busy.kvCacheUsage).toBeGreaterThan(0);
    expect(busy.kvCacheUsage).toBeLessThanOrEqual(1);
    await release();
  });

  it("vLLM before 0.9 (only vllm:gpu_cache_usage_perc): the KV cache is still read", async () => {
    const { idle, busy, release } = await underLoad("vllm", { engineVersion: "legacy" });
    expect(idle.kvCacheUsage).toBe(0);
    expect(busy.kvCacheUsage).toBeGreaterThan(0);
    await release();
  });

  it("llama.cpp: n_ctx, total_slots, processing and deferred; no KV gauge in current builds", async () => {
    const { idle, busy, release } = await underLoad("llamacpp", { contextLength: 4096 });
    expect(idle).toMatchObject({
      engine: "llamacpp",
      models: ["qwen3:8b"],
      contextLengths: { "qwen3:8b": 4096 },
      slots: 2,
      running: 0,
      waiting: 0,
      tokenize: true,
    });
    expect(idle.kvCacheUsage).toBeUndefined();
    expect(busy.kvCacheUsage).toBeUndefined();
    await release();
  });

  it("llama.cpp legacy builds: llamacpp:kv_cache_usage_ratio is read", async () => {
    const { busy, release } = await underLoad("llamacpp", { engineVersion: "legacy" });
    expect(busy.kvCacheUsage).toBeGreaterThan(0);
    await release();
  });

  it("SGLang: max_running_requests, max_model_len, running and queued, token usage", async () => {
    const { idle, busy, release } = await underLoad("sglang", { contextLength: 2048, kvCacheTokens: 4096 });
    expect(idle).toEqual({
      engine: "sglang",
      models: ["qwen3:8b"],
      contextLengths: { "qwen3:8b": 2048 },
      slots: 2,
      running: 0,
      waiting: 0,
      kvCacheUsage: 0,
      tokenize: true,
    });
    expect(busy.kvCacheUsage).toBeGreaterThan(0);
    await release();
  });

  it("openai: /v1/models only (here a vLLM personality, which is OpenAI-compatible)", async () => {
    const emu = await emulator({ engine: "vllm", contextLength: 8192 });
    expect(await prober("openai", emu.url).probe()).toEqual({
      engine: "openai",
      models: ["qwen3:8b"],
      contextLengths: { "qwen3:8b": 8192 },
      tokenize: false,
    });
  });
});

describe("a wrong engine declared", () => {
  async function mismatch(declared: FixedEngine, served: EmulatorOptions["engine"]) {
    const emu = await emulator({ engine: served });
    const err = await prober(declared, emu.url)
      .probe()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(EngineMismatchError);
    return err as EngineMismatchError;
  }

  it.each<[FixedEngine, NonNullable<EmulatorOptions["engine"]>]>([
    ["vllm", "ollama"],
    ["vllm", "llamacpp"],
    ["vllm", "sglang"],
    ["llamacpp", "vllm"],
    ["llamacpp", "ollama"],
    ["sglang", "vllm"],
    ["sglang", "llamacpp"],
  ])("declared %s, %s answers", async (declared, served) => {
    const err = await mismatch(declared, served);
    expect(err).toMatchObject({ kind: "mismatch", declared, detected: served });
    expect(err.message).toContain(`declared ${declared}, but ${served} answers`);
  });

  it("declared ollama, a vLLM answers: /api/ps 404, then /v1/models with max_model_len", async () => {
    const emu = await emulator({ engine: "vllm" });
    const client = new OllamaClient({ baseUrl: emu.url, timeoutMs: 2000 });
    open.push(client);
    const failure = await client.ps().catch((e: unknown) => e);
    expect(failure).toMatchObject({ kind: "http", status: 404 });
    const http = new EngineHttp({ baseUrl: emu.url });
    open.push(http);
    expect(await mismatchOr(http, "ollama", failure)).toMatchObject({ declared: "ollama", detected: "vllm" });
  });

  it("a server that does not answer is down, not another engine", async () => {
    const emu = await emulator({ engine: "vllm" });
    const url = emu.url;
    await emu.close();
    const err = await prober("vllm", url)
      .probe()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).not.toBeInstanceOf(EngineMismatchError);
    expect(err).toMatchObject({ kind: "refused" });
  });
});
