// What counts as a change of a published provider state (docs/rules/binding.md §8): every
// field but lastProbedAt, maps whatever their key order, loadedModels and singleSlotModels as
// sets, an absent field as undefined.
import { describe, expect, it } from "vitest";
import type { ProviderState } from "../core/index.js";
import { sameButProbeTime } from "./same-state.js";

const base: ProviderState = {
  name: "gpu",
  endpoint: "http://gpu:11434",
  maxParallel: 2,
  activeCount: 0,
  queueDepth: 0,
  loadedModels: ["qwen3:8b", "qwen3:14b"],
  ready: true,
  lastProbedAt: "2026-06-11T00:00:00Z",
  totalVramMiB: 24563,
  loadedModelFootprintsMiB: { "qwen3:8b": 5200, "qwen3:14b": 9800 },
  availableModelFootprintsMiB: { "qwen3:32b": 19000 },
  contextLength: 4096,
  loadedModelContextLengths: { "qwen3:8b": 4096, "qwen3:14b": 8192 },
  singleSlotModels: ["a-embed", "b-embed"],
};

const fixed: ProviderState = {
  ...base,
  loadedModels: ["qwen3:8b"],
  loadedModelFootprintsMiB: { "qwen3:8b": 24563 },
  availableModelFootprintsMiB: {},
  engine: "vllm",
  kvCacheUsage: 0.25,
  tokenize: true,
};

describe("sameButProbeTime", () => {
  it("ignores lastProbedAt alone", () => {
    expect(sameButProbeTime(base, { ...base, lastProbedAt: "2026-06-11T00:00:10Z" })).toBe(true);
    expect(sameButProbeTime(fixed, structuredClone({ ...fixed, lastProbedAt: "" }))).toBe(true);
  });

  it("compares maps whatever their key order, and the model lists as sets", () => {
    const reordered: ProviderState = {
      ...base,
      loadedModels: ["qwen3:14b", "qwen3:8b", "qwen3:14b"],
      loadedModelFootprintsMiB: { "qwen3:14b": 9800, "qwen3:8b": 5200 },
      loadedModelContextLengths: { "qwen3:14b": 8192, "qwen3:8b": 4096 },
      singleSlotModels: ["b-embed", "a-embed"],
    };
    expect(sameButProbeTime(base, reordered)).toBe(true);
  });

  it("reads an absent field as undefined", () => {
    const { singleSlotModels: _, ...without } = base;
    expect(sameButProbeTime({ ...without, singleSlotModels: undefined } as ProviderState, without)).toBe(
      true,
    );
    expect(sameButProbeTime(base, without)).toBe(false);
    expect(sameButProbeTime(without, base)).toBe(false);
  });

  const changes: [string, ProviderState, Partial<ProviderState>][] = [
    ["ready", base, { ready: false }],
    ["a model loaded", base, { loadedModels: [...base.loadedModels, "qwen3:32b"] }],
    ["a model gone", base, { loadedModels: ["qwen3:8b"] }],
    ["a footprint", base, { loadedModelFootprintsMiB: { "qwen3:8b": 5201, "qwen3:14b": 9800 } }],
    ["a footprint added", base, { loadedModelFootprintsMiB: { ...base.loadedModelFootprintsMiB, x: 0 } }],
    ["an on-disk size", base, { availableModelFootprintsMiB: {} }],
    ["a loaded context", base, { loadedModelContextLengths: { "qwen3:8b": 4096 } }],
    ["the context", base, { contextLength: 8192 }],
    ["the total VRAM", base, { totalVramMiB: 32605 }],
    ["the slots", base, { maxParallel: 4 }],
    ["activeCount", base, { activeCount: 1 }],
    ["queueDepth", base, { queueDepth: 3 }],
    ["the endpoint", base, { endpoint: "http://gpu-2:11434" }],
    ["maxLoadedModels", base, { maxLoadedModels: 2 }],
    ["the single-slot models", base, { singleSlotModels: ["a-embed"] }],
    ["the engine", fixed, { engine: "sglang" }],
    ["the KV-cache usage", fixed, { kvCacheUsage: 0.26 }],
    ["the KV-cache usage going unknown", fixed, { kvCacheUsage: undefined }],
    ["tokenize", fixed, { tokenize: false }],
  ];
  it.each(changes)("sees a change of %s", (_, from, change) => {
    const to = { ...from, ...change, lastProbedAt: "2026-06-11T00:00:10Z" };
    expect(sameButProbeTime(from, to)).toBe(false);
    expect(sameButProbeTime(to, from)).toBe(false);
  });
});
