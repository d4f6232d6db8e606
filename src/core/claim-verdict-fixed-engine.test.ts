// The claim budget on a fixed-model engine (docs/rules/engines.md "Placement"): its VRAM is
// preallocated by the engine, so a ticket there takes a slot and never room; it is warm for what
// it serves and refused for anything else (it cannot load).
import { describe, expect, it } from "vitest";
import { provider, T0, ticket } from "../../test/helpers/core-fixtures.js";
import { claimVerdict } from "./claim-verdict.js";
import type { ProviderState } from "./shapes.js";

const VL = "Qwen/Qwen3-8B";

function vllm(over: Partial<ProviderState> = {}): ProviderState {
  return provider("vllm-a", {
    engine: "vllm",
    maxParallel: 16,
    loadedModels: [VL],
    // The engine's preallocation, as a probe may report it: more than the usable share of the card.
    loadedModelFootprintsMiB: { [VL]: 73000 },
    totalVramMiB: 81920,
    ...over,
  });
}

const claimOf = (model: string, mib = 0) => ({ modelName: model, modelFootprintMiB: mib, evicts: {} });

describe("claims on a fixed-model engine", () => {
  it("are warm for its model beside a stale ticket the budget would count as a load", () => {
    // A ticket on a model the engine no longer lists: on an Ollama card a load in flight that,
    // with the published sizes, would overfill the budget.
    const view = {
      state: vllm(),
      tickets: [ticket("vllm-a", "old-model", { modelFootprintMiB: 9000 })],
      residencies: [],
    };
    expect(claimVerdict(view, claimOf(VL), T0)).toEqual({ ok: true, coldLoad: false });
  });

  it("are warm whatever its total says (unknown included)", () => {
    const view = {
      state: vllm({ totalVramMiB: 0, loadedModelFootprintsMiB: {} }),
      tickets: [],
      residencies: [],
    };
    expect(claimVerdict(view, claimOf(VL), T0)).toEqual({ ok: true, coldLoad: false });
  });

  it("are refused for a model it does not serve, however much room its total shows", () => {
    const view = { state: vllm({ loadedModelFootprintsMiB: {} }), tickets: [], residencies: [] };
    expect(claimVerdict(view, claimOf("qwen3:8b", 5979), T0)).toEqual({ ok: false, reason: "no-room" });
  });

  it("leave Ollama cards to the budget as before", () => {
    const card = provider("gpu-a", { totalVramMiB: 24563, loadedModels: [] });
    const view = { state: card, tickets: [], residencies: [] };
    expect(claimVerdict(view, claimOf("qwen3:8b", 5979), T0)).toEqual({ ok: true, coldLoad: true });
  });
});
