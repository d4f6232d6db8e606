import { describe, expect, it } from "vitest";
import type { EngineProbe } from "../engines/index.js";
import { toEngineProviderState, unreadyEngineState, VLLM_DEFAULT_MAX_NUM_SEQS } from "./engine-state.js";

const at = "2026-06-11T00:00:00.500Z";
const cfg = { name: "gpu-v", endpoint: "http://v:8000" };
const vllm: EngineProbe = {
  engine: "vllm",
  models: ["Qwen/Qwen3-8B", "my-lora"],
  contextLengths: { "Qwen/Qwen3-8B": 40_960 },
  running: 3,
  waiting: 1,
  kvCacheUsage: 0.25,
  tokenize: true,
};

describe("toEngineProviderState", () => {
  it("reads a fixed-model engine's probe as docs/rules/engines.md says", () => {
    expect(toEngineProviderState({ ...cfg, totalVramMiB: 24_563 }, vllm, undefined, at)).toEqual({
      name: "gpu-v",
      endpoint: "http://v:8000",
      maxParallel: VLLM_DEFAULT_MAX_NUM_SEQS,
      activeCount: 3,
      queueDepth: 1,
      loadedModels: ["Qwen/Qwen3-8B", "my-lora"],
      ready: true,
      lastProbedAt: "2026-06-11T00:00:00Z",
      totalVramMiB: 24_563,
      loadedModelFootprintsMiB: { "Qwen/Qwen3-8B": 24_563, "my-lora": 0 },
      availableModelFootprintsMiB: {},
      contextLength: 40_960,
      loadedModelContextLengths: { "Qwen/Qwen3-8B": 40_960 },
      engine: "vllm",
      kvCacheUsage: 0.25,
      tokenize: true,
    });
  });

  it("a CPU engine's resident memory is its footprint instead of the card's VRAM", () => {
    const probe: EngineProbe = { ...vllm, engine: "llamacpp", models: ["tiny", "other"], residentMiB: 120 };
    const s = toEngineProviderState({ ...cfg, totalVramMiB: 4096 }, probe, undefined, at);
    expect(s.totalVramMiB).toBe(4096);
    expect(s.loadedModelFootprintsMiB).toEqual({ tiny: 120, other: 0 });
  });

  it.each<[string, Partial<EngineProbe>, number | undefined, number]>([
    ["the engine's own slots win", { engine: "llamacpp", slots: 4 }, 16, 4],
    ["else the configured count", { engine: "vllm" }, 64, 64],
    ["else vLLM's default max_num_seqs", { engine: "vllm" }, undefined, 256],
    ["else 1", { engine: "openai" }, undefined, 1],
  ])("slots: %s", (_what, probe, configured, slots) => {
    const s = toEngineProviderState(
      { ...cfg, maxParallel: configured },
      { ...vllm, ...probe },
      undefined,
      at,
    );
    expect(s.maxParallel).toBe(slots);
  });

  it("unknown KV cache and no /tokenize leave the fields out; DCGM wins; configured context as fallback", () => {
    const s = toEngineProviderState(
      { ...cfg, totalVramMiB: 1000, contextLength: 4096 },
      { engine: "openai", models: ["m"], contextLengths: {}, tokenize: false },
      { totalMiB: 32_605 },
      at,
    );
    expect(s).not.toHaveProperty("kvCacheUsage");
    expect(s).not.toHaveProperty("tokenize");
    expect(s).toMatchObject({ totalVramMiB: 32_605, contextLength: 4096, activeCount: 0, queueDepth: 0 });
  });

  it("an unready engine state keeps the engine and the last good values", () => {
    const good = toEngineProviderState(cfg, vllm, undefined, at);
    expect(unreadyEngineState(cfg, "vllm", good, "2026-06-11T00:01:00Z")).toEqual({
      ...good,
      ready: false,
      lastProbedAt: "2026-06-11T00:01:00Z",
    });
    expect(unreadyEngineState(cfg, "sglang", undefined, at)).toMatchObject({
      ready: false,
      engine: "sglang",
      loadedModels: [],
      maxParallel: 1,
    });
  });
});
