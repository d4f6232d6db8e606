import { describe, expect, it } from "vitest";
import { provider } from "../../test/binding/fixtures.js";
import type { ProviderState } from "../core/index.js";
import { freeFraction } from "./capacity.js";
import { applyProviderStates } from "./provider-state.js";

function state(o: Partial<ProviderState> & { name: string }): ProviderState {
  return {
    endpoint: "",
    maxParallel: 0,
    activeCount: 0,
    queueDepth: 0,
    loadedModels: [],
    ready: false,
    lastProbedAt: "",
    totalVramMiB: 0,
    loadedModelFootprintsMiB: {},
    availableModelFootprintsMiB: {},
    contextLength: 0,
    loadedModelContextLengths: {},
    ...o,
  };
}

describe("applyProviderStates", () => {
  it("the probe's VRAM, slots, readiness and residents replace the manifest status", () => {
    const p = provider("gpu-a", {
      vramTotalMiB: 1000,
      maxParallel: 1,
      agentCount: 3,
      loaded: [["old", 500]],
    });
    const [out] = applyProviderStates(
      [p],
      [
        state({
          name: "gpu-a",
          ready: true,
          totalVramMiB: 24563,
          maxParallel: 2,
          contextLength: 8192,
          loadedModels: ["qwen3:8b"],
          loadedModelFootprintsMiB: { "qwen3:8b": 6144 },
          loadedModelContextLengths: { "qwen3:8b": 8192 },
        }),
      ],
    );
    expect(out!.status).toEqual({
      ready: true,
      capacity: {
        vramTotalMiB: 24563,
        vramUsedMiB: 6144,
        maxParallel: 2,
        agentCount: 3,
        contextLength: 8192,
        loadedModels: [{ name: "qwen3:8b", sizeMiB: 6144, contextLength: 8192 }],
      },
    });
    expect(Math.round(20 * freeFraction(out!))).toBe(14);
  });

  it("missing fields are zero values: not ready, nothing loaded, unknown totals keep the manifest's", () => {
    const p = provider("gpu-a", { vramTotalMiB: 24563, maxParallel: 4, loaded: [["x", 1]] });
    const [out] = applyProviderStates([p], [state({ name: "gpu-a" })]);
    expect(out!.status.ready).toBe(false);
    expect(out!.status.capacity?.vramTotalMiB).toBe(24563);
    expect(out!.status.capacity?.maxParallel).toBe(4);
    expect(out!.status.capacity?.loadedModels).toEqual([]);
  });

  it("providers without state are unchanged (same object)", () => {
    const p = provider("gpu-b");
    expect(applyProviderStates([p], [state({ name: "gpu-a", ready: true })])[0]).toBe(p);
  });

  it("a footprint without a loadedModels entry still counts as loaded", () => {
    const [out] = applyProviderStates(
      [provider("gpu-a")],
      [state({ name: "gpu-a", ready: true, loadedModelFootprintsMiB: { "qwen3:14b": 9000 } })],
    );
    expect(out!.status.capacity?.loadedModels).toEqual([{ name: "qwen3:14b", sizeMiB: 9000 }]);
  });
});
