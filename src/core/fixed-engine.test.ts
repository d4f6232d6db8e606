// Placement across engines (docs/rules/engines.md "Placement"): a fixed-model engine (vLLM,
// llama.cpp, SGLang) is warm for what it serves and nothing else, is never loaded, unloaded or
// a victim, costs its contention (requests ahead, KV pressure) and answers with its own context.
import { describe, expect, it } from "vitest";
import { iso, provider, RTX_4090_MIB, snapshot, T0, ticket } from "../../test/helpers/core-fixtures.js";
import type { Candidate } from "./candidates.js";
import { type ModelDemand, NO_DEMAND } from "./demand.js";
import { slotWaitS } from "./expected-time.js";
import { fixedCapacity, fixedLoad, fixedWaitS } from "./fixed-engine.js";
import { decide, type PlanRequest } from "./planner.js";
import type { ProviderState } from "./shapes.js";
import { indexSnapshot, type PlacementSnapshot, type PolicyName, type ProviderHealth } from "./snapshot.js";

const Q8 = "qwen3:8b";
const Q14 = "qwen3:14b";
const VL = "Qwen/Qwen3-8B"; // the vLLM server's served name: the same family, another name
const F8 = 5979;
const F14 = 12224;
const POLICIES: PolicyName[] = ["time", "kubemoot"];

const cands = (...list: [string, number][]): Candidate[] => list.map(([model, score]) => ({ model, score }));
const req = (candidates: Candidate[], over: Partial<PlanRequest> = {}): PlanRequest => ({
  candidates,
  promptTokens: 1000,
  ...over,
});

/** An Ollama card with the 8b and the 14b on disk. */
function ollama(name: string, over: Partial<ProviderState> = {}): ProviderState {
  return provider(name, {
    totalVramMiB: RTX_4090_MIB,
    contextLength: 8192,
    availableModelFootprintsMiB: { [Q8]: F8 / 1.2, [Q14]: F14 / 1.2 },
    ...over,
  });
}

/** A vLLM server as the contract publishes it: what it serves, its slots, no catalog. */
function vllm(name: string, over: Partial<ProviderState> = {}): ProviderState {
  return provider(name, {
    engine: "vllm",
    totalVramMiB: 81920, // a probe may know the card; the engine preallocated it all the same
    maxParallel: 16,
    loadedModels: [VL],
    loadedModelFootprintsMiB: { [VL]: 70000 },
    loadedModelContextLengths: { [VL]: 32768 },
    contextLength: 32768,
    availableModelFootprintsMiB: {},
    ...over,
  });
}

const health = (entries: Record<string, ProviderHealth>): Map<string, ProviderHealth> =>
  new Map(Object.entries(entries));

describe("a fixed-model engine is warm for what it serves, and only that", () => {
  it.each(POLICIES)("%s: takes the vLLM server warm when the Ollama copy would need a load", (policy) => {
    const snap = snapshot({ providers: [ollama("gpu-a"), vllm("vllm-a")] });
    const d = decide(snap, req(cands([Q8, 80], [VL, 78])), { policy });
    expect(d).toMatchObject({ kind: "claim", provider: "vllm-a", model: VL, cold: false, evicts: {} });
    if (d.kind === "claim") expect(d.footprintMiB).toBe(0); // a slot, no VRAM
  });

  it.each(POLICIES)("%s: is never a candidate for another model, even with room by its total", (policy) => {
    // Only the vLLM server is up: an 8b cold load "fits" its 80 GiB total, but it cannot load.
    const snap = snapshot({ providers: [vllm("vllm-a")] });
    const d = decide(snap, req(cands([Q8, 80])), { policy });
    expect(d.kind).toBe("refuse");
    if (d.kind === "refuse") expect(d.reason).toBe("model-unknown");
  });

  it.each(POLICIES)(
    "%s: loads the Ollama model onto the Ollama card, never onto the vLLM server",
    (policy) => {
      const snap = snapshot({ providers: [ollama("gpu-a"), vllm("vllm-a")] });
      const d = decide(snap, req(cands([Q14, 80])), { policy });
      expect(d).toMatchObject({ kind: "claim", provider: "gpu-a", model: Q14, cold: true });
    },
  );

  it.each(POLICIES)(
    "%s: only through the candidate list: a vLLM model nobody listed is never used",
    (policy) => {
      // The Ollama card is full of busy work; the vLLM server is idle but serves another name.
      const busy = ollama("gpu-a", {
        loadedModels: [Q14],
        loadedModelFootprintsMiB: { [Q14]: 20000 },
        availableModelFootprintsMiB: { [Q14]: F14 / 1.2, [Q8]: F8 / 1.2 },
      });
      const snap = snapshot({
        providers: [busy, vllm("vllm-a")],
        tickets: [ticket("gpu-a", Q14)],
      });
      const d = decide(snap, req(cands([Q8, 80])), { policy });
      expect(d.kind === "claim" ? d.provider : d.kind).not.toBe("vllm-a");
      if (d.kind === "claim") expect(d.model).toBe(Q8);
    },
  );

  it("is never a victim: its resident models are not idle residents, and no unload is planned there", () => {
    // The vLLM server serves Q14 too (as a name the agent lists): a Q8 call finds no room on
    // the Ollama card (busy) and the vLLM server cannot make any.
    const snap = snapshot({
      providers: [
        ollama("gpu-a", {
          loadedModels: [Q14],
          loadedModelFootprintsMiB: { [Q14]: 20000 },
        }),
        vllm("vllm-a", { loadedModels: [Q14], loadedModelContextLengths: { [Q14]: 32768 } }),
      ],
      tickets: [ticket("gpu-a", Q14)],
    });
    for (const policy of POLICIES) {
      const d = decide(snap, req(cands([Q8, 80])), { policy });
      if (d.kind === "claim") {
        expect(d.provider).not.toBe("vllm-a");
        expect(Object.keys(d.evicts)).not.toContain(Q14);
      }
    }
    const ix = indexSnapshot(snap);
    const v = ix.byName.get("vllm-a")!;
    expect(v.fixed).toBe(true);
    expect(v.usable).toBe(0);
    expect(v.totalKnown).toBe(false);
    expect([...v.catalog!]).toEqual([Q14]);
  });

  it("does not count its preallocated VRAM as the occupancy of a model an Ollama card may load", () => {
    // The vLLM server publishes 70000 MiB for VL; an Ollama copy of the same name would be sized
    // from its own disk size, not from the engine's preallocation.
    const snap = snapshot({
      providers: [ollama("gpu-a", { availableModelFootprintsMiB: { [VL]: 5000 } }), vllm("vllm-a")],
    });
    expect(indexSnapshot(snap).occupancy(VL)).toMatchObject({ known: true, mib: 6000 });
  });

  it("a ticket on a model it does not serve is no load in flight there", () => {
    const snap = snapshot({ providers: [vllm("vllm-a")], tickets: [ticket("vllm-a", Q8)] });
    const v = indexSnapshot(snap).byName.get("vllm-a")!;
    expect(v.loading.size).toBe(0);
    expect(v.catalog!.has(Q8)).toBe(false);
  });
});

describe("its cost: requests ahead against its slots, and KV pressure", () => {
  it("counts running and waiting requests at the probe, plus our tickets claimed since", () => {
    const s = vllm("v", { activeCount: 5, queueDepth: 2, lastProbedAt: iso(T0) });
    const before = ticket("v", VL, { claimedAtMs: T0 - 1000 }); // the probe saw it running
    const after = ticket("v", VL, { claimedAtMs: T0 + 1000 });
    expect(fixedLoad(s, [])).toBe(7);
    expect(fixedLoad(s, [before])).toBe(7);
    expect(fixedLoad(s, [before, after])).toBe(8);
    // Never fewer than our own live tickets.
    expect(fixedLoad(vllm("v", { activeCount: 0 }), [before, before, before])).toBe(3);
  });

  it("a KV cache near full leaves room for about what runs now", () => {
    expect(fixedCapacity(16, 8, undefined)).toBe(16);
    expect(fixedCapacity(16, 8, 0.25)).toBe(16); // the cache holds ~32 of them: slots limit
    expect(fixedCapacity(16, 8, 0.8)).toBe(10);
    expect(fixedCapacity(16, 8, 0.99)).toBe(8);
    expect(fixedCapacity(16, 8, 1)).toBe(8);
    expect(fixedCapacity(16, 0, 0.99)).toBe(16); // nothing running: the usage says nothing
  });

  it("expected wait grows with the requests ahead once it runs at capacity", () => {
    expect(fixedWaitS(3, 4, 10)).toBe(0);
    expect(fixedWaitS(4, 4, 10)).toBe(2.5);
    expect(fixedWaitS(8, 4, 10)).toBe(12.5);
  });

  it("through the index: more waiting requests, or more KV pressure, mean a longer wait", () => {
    const h = health({ v: { serviceByModel: new Map([[VL, 8000]]) } });
    const wait = (over: Partial<ProviderState>) => {
      const ix = indexSnapshot(snapshot({ providers: [vllm("v", { maxParallel: 4, ...over })], health: h }));
      return slotWaitS(ix, ix.byName.get("v")!, VL);
    };
    expect(wait({ activeCount: 2 })).toBe(0);
    expect(wait({ activeCount: 4 })).toBe(2);
    expect(wait({ activeCount: 4, queueDepth: 3 })).toBe(8);
    expect(wait({ activeCount: 4, queueDepth: 6 })).toBeGreaterThan(wait({ activeCount: 4, queueDepth: 3 }));
    expect(wait({ activeCount: 3, kvCacheUsage: 0.5 })).toBe(0);
    expect(wait({ activeCount: 3, kvCacheUsage: 0.97 })).toBeGreaterThan(0);
  });

  it.each(POLICIES)("%s: between two servers of one model, the less contended one", (policy) => {
    const snap = snapshot({
      providers: [
        vllm("vllm-a", { maxParallel: 4, activeCount: 4, queueDepth: 5 }),
        vllm("vllm-b", { maxParallel: 4, activeCount: 1 }),
      ],
    });
    expect(decide(snap, req(cands([VL, 80])), { policy })).toMatchObject({
      kind: "claim",
      provider: "vllm-b",
    });
  });

  it.each(POLICIES)("%s: KV pressure counts as contention", (policy) => {
    const snap = snapshot({
      providers: [
        vllm("vllm-a", { maxParallel: 16, activeCount: 6, kvCacheUsage: 0.99 }),
        vllm("vllm-b", { maxParallel: 16, activeCount: 6, kvCacheUsage: 0.4 }),
      ],
    });
    expect(decide(snap, req(cands([VL, 80])), { policy })).toMatchObject({
      kind: "claim",
      provider: "vllm-b",
    });
  });

  it("time: a saturated server is a queue with its wait, never a claim past its capacity", () => {
    const demand = new Map<string, ModelDemand>([[VL, { ...NO_DEMAND, serviceMs: 10_000 }]]);
    const snap: PlacementSnapshot = snapshot({
      providers: [vllm("vllm-a", { maxParallel: 4, activeCount: 4, queueDepth: 4 })],
      demand,
    });
    const d = decide(snap, req(cands([VL, 80])));
    expect(d).toMatchObject({ kind: "queue", provider: "vllm-a", estimatedWaitS: 12.5 });
  });
});

describe("its context is the engine's own limit", () => {
  it.each(POLICIES)("%s: a prompt over the engine's limit goes elsewhere, or is refused", (policy) => {
    const small = vllm("vllm-a", { loadedModelContextLengths: { [VL]: 4096 }, contextLength: 4096 });
    const d = decide(snapshot({ providers: [small] }), req(cands([VL, 80]), { promptTokens: 6000 }), {
      policy,
    });
    expect(d).toMatchObject({ kind: "refuse", reason: "prompt-too-large", largestContext: 4096 });
    const fits = decide(snapshot({ providers: [small] }), req(cands([VL, 80]), { promptTokens: 4000 }), {
      policy,
    });
    expect(fits).toMatchObject({ kind: "claim", provider: "vllm-a", contextLength: 4096 });
  });
});
