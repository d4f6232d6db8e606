import { describe, expect, it } from "vitest";
import type { OllamaPsModel, OllamaTagModel } from "../engines/index.js";
import {
  bytesToMiB,
  formatProbedAt,
  singleSlot,
  toProviderState,
  unreadyProviderState,
} from "./provider-state.js";

const MiB = 1024 * 1024;
const at = "2026-06-11T00:00:00.123Z";
const cfg = { name: "ollama-rig1", endpoint: "http://ollama.ollama-rig1:11434" };

const psEntry = (name: string, bytes: number, ctx?: number): Partial<OllamaPsModel> => ({
  name,
  model: name,
  size: bytes,
  size_vram: bytes,
  ...(ctx === undefined ? {} : { context_length: ctx }),
});
const tag = (name: string, bytes: number): Partial<OllamaTagModel> => ({ name, model: name, size: bytes });

describe("bytesToMiB", () => {
  it.each([
    [0, 0],
    [1, 1],
    [MiB, 1],
    [MiB + 1, 2],
    [4863 * MiB, 4863],
    [5_225_387_923, 4984], // 4983.3 MiB, rounded up
    [-5, 0],
    [Number.NaN, 0],
    ["12", 0],
    [undefined, 0],
  ])("%s bytes → %d MiB", (bytes, mib) => {
    expect(bytesToMiB(bytes)).toBe(mib);
  });
});

describe("toProviderState", () => {
  it("matches the spec's example for an idle provider", () => {
    const s = toProviderState(
      { ...cfg, totalVramMiB: 24_563 },
      { ps: [], tags: [tag("qwen3:32b", 27_847 * MiB), tag("qwen3:8b", 4863 * MiB)] },
      "2026-06-11T00:00:00Z",
    );
    expect(s).toEqual({
      name: "ollama-rig1",
      endpoint: "http://ollama.ollama-rig1:11434",
      maxParallel: 1,
      activeCount: 0,
      queueDepth: 0,
      loadedModels: [],
      ready: true,
      lastProbedAt: "2026-06-11T00:00:00Z",
      totalVramMiB: 24_563,
      loadedModelFootprintsMiB: {},
      availableModelFootprintsMiB: { "qwen3:32b": 27_847, "qwen3:8b": 4863 },
      contextLength: 32_768,
      loadedModelContextLengths: {},
    });
  });

  it("splits loaded from available models, footprints from size_vram, contexts from /api/ps", () => {
    const s = toProviderState(
      { ...cfg, maxParallel: 2, contextLength: 8192 },
      {
        ps: [
          psEntry("qwen3:8b", 8959 * MiB, 32_768),
          { ...psEntry("qwen3:14b", 20_000 * MiB), size_vram: 12_000 * MiB + 1 },
        ],
        tags: [tag("qwen3:8b", 4863 * MiB), tag("qwen3:14b", 9000 * MiB), tag("llama3.1:8b", 4700 * MiB)],
        dcgm: { totalMiB: 49_126 },
      },
      at,
    );
    expect(s.loadedModels).toEqual(["qwen3:8b", "qwen3:14b"]);
    expect(s.loadedModelFootprintsMiB).toEqual({ "qwen3:8b": 8959, "qwen3:14b": 12_001 });
    expect(s.loadedModelContextLengths).toEqual({ "qwen3:8b": 32_768 });
    expect(s.availableModelFootprintsMiB).toEqual({ "llama3.1:8b": 4700 });
    expect(s.totalVramMiB).toBe(49_126); // DCGM wins over configuration
    expect(s.maxParallel).toBe(2);
    expect(s.contextLength).toBe(8192);
    expect(s.lastProbedAt).toBe("2026-06-11T00:00:00Z");
  });

  it("tolerates missing and malformed fields", () => {
    const s = toProviderState(
      { ...cfg, maxParallel: 0 },
      {
        ps: [
          { model: "only-model:1b", size: 3 * MiB }, // no name, no size_vram (older servers)
          { name: "", size_vram: MiB },
          null as unknown as Partial<OllamaPsModel>,
          { name: "neg:1b", size_vram: -1, context_length: -4 },
        ],
        tags: [{ name: "t:1b" }, { size: 5 }],
      },
      at,
    );
    expect(s.loadedModels).toEqual(["only-model:1b", "neg:1b"]);
    expect(s.loadedModelFootprintsMiB).toEqual({ "only-model:1b": 3, "neg:1b": 0 });
    expect(s.loadedModelContextLengths).toEqual({});
    expect(s.availableModelFootprintsMiB).toEqual({ "t:1b": 0 });
    expect(s.maxParallel).toBe(1); // at least 1
    expect(s.totalVramMiB).toBe(0); // unknown
    expect(s.contextLength).toBe(0); // unknown without VRAM or configuration
  });

  it.each([
    [undefined, 1],
    [0, 1],
    [-3, 1],
    [1.7, 1],
    [4, 4],
  ])("maxParallel %s → %d", (configured, expected) => {
    expect(toProviderState({ ...cfg, maxParallel: configured }, { ps: [], tags: [] }, at).maxParallel).toBe(
      expected,
    );
  });

  it.each([
    [16_000, 4096],
    [24_563, 32_768],
    [48_128, 262_144],
  ])("with %d MiB and no configured context, Ollama's default %d", (vram, ctx) => {
    expect(toProviderState({ ...cfg, totalVramMiB: vram }, { ps: [], tags: [] }, at).contextLength).toBe(ctx);
  });

  it("lists single-slot models once, sorted, and only when there are some", () => {
    const cfg = { name: "rig", endpoint: "http://rig:11434" };
    const at = "2026-06-11T00:00:00Z";
    const s = toProviderState(
      cfg,
      { ps: [], tags: [], singleSlot: ["b:latest", "a:latest", "b:latest"] },
      at,
    );
    expect(s.singleSlotModels).toEqual(["a:latest", "b:latest"]);
    expect(Object.keys(toProviderState(cfg, { ps: [], tags: [], singleSlot: [] }, at))).not.toContain(
      "singleSlotModels",
    );
    // Ollama's capabilities: an embedding model cannot complete; unknown keeps the slots.
    expect([["embedding"], ["completion", "tools"], [], undefined, "embedding"].map(singleSlot)).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
  });

  it("formats lastProbedAt as RFC 3339 UTC seconds", () => {
    expect(formatProbedAt(new Date("2026-06-11T10:20:30.999+02:00"))).toBe("2026-06-11T08:20:30Z");
    expect(formatProbedAt(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02T03:04:05Z");
    expect(formatProbedAt("garbage")).toBe("");
  });

  it("an unready state keeps the last good values with ready=false", () => {
    const good = toProviderState(cfg, { ps: [psEntry("qwen3:8b", 8959 * MiB, 4096)], tags: [] }, at);
    const down = unreadyProviderState(cfg, good, "2026-06-11T00:00:30Z");
    expect(down).toEqual({ ...good, ready: false, lastProbedAt: "2026-06-11T00:00:30Z" });
    const never = unreadyProviderState(cfg, undefined, at);
    expect(never).toMatchObject({ ready: false, loadedModels: [], maxParallel: 1, name: "ollama-rig1" });
  });
});
