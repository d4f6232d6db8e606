import { describe, expect, it } from "vitest";
import {
  iso,
  provider,
  RTX_4090_MIB,
  RTX_5090_MIB,
  residency,
  snapshot,
  T0,
  ticket,
} from "../../test/helpers/core-fixtures.js";
import type { Candidate } from "./candidates.js";
import { CLOSED_CIRCUIT, recordFailure } from "./circuit-breaker.js";
import { type ModelDemand, NO_DEMAND } from "./demand.js";
import { decide as decideBy, type PlanRequest } from "./planner.js";
import type { PlacementSnapshot, PlannerOptions, ProviderHealth } from "./snapshot.js";

// These are the rules of Kubemoot's weighted cost (KUBEMOOT_POLICY=kubemoot); the default
// policy, by expected seconds, has its own tests (policies/time.test.ts).
const decide = (snap: PlacementSnapshot, r: PlanRequest, o: Partial<PlannerOptions> = {}) =>
  decideBy(snap, r, { policy: "kubemoot", ...o });

const Q8 = "qwen3:8b";
const Q14 = "qwen3:14b";
const Q32 = "qwen3:32b";
const F8 = 5979;
const F14 = 12224;
const F32 = 27252;

/** Sizes as /api/tags would give them, so occupancy is known without a loaded copy. */
const DISK = { [Q8]: F8 / 1.2, [Q14]: F14 / 1.2, [Q32]: F32 / 1.2 };

const cands = (...list: [string, number][]): Candidate[] => list.map(([model, score]) => ({ model, score }));
const req = (over: Partial<PlanRequest> & { candidates: Candidate[] }): PlanRequest => ({
  promptTokens: 1000,
  ...over,
});
const health = (entries: [string, ProviderHealth][]) => new Map(entries);
const demand = (entries: [string, Partial<ModelDemand>][]) =>
  new Map(entries.map(([m, d]) => [m, { ...NO_DEMAND, ...d }]));

function card(name: string, total: number, over: Parameters<typeof provider>[1] = {}) {
  return provider(name, { totalVramMiB: total, availableModelFootprintsMiB: DISK, ...over });
}

describe("§4 worked examples through the planner", () => {
  it("qwen3:8b cold on two empty cards goes to the 4090 (≈70.38 vs ≈99.97)", () => {
    const d = decide(
      snapshot({ providers: [card("rtx5090", RTX_5090_MIB), card("rtx4090", RTX_4090_MIB)] }),
      req({ candidates: cands([Q8, 80]) }),
    );
    expect(d).toMatchObject({
      kind: "claim",
      provider: "rtx4090",
      model: Q8,
      cold: true,
      step: 4,
      evicts: {},
    });
    if (d.kind === "claim") {
      expect(d.cost).toBeCloseTo(70.38, 2);
      // occupancy from on-disk × 1.2 (rounded up) equals the observed 5979 here
      expect(d.footprintMiB).toBe(F8);
    }
  });

  it("qwen3:32b cold on two empty cards: only the 5090", () => {
    const d = decide(
      snapshot({ providers: [card("rtx4090", RTX_4090_MIB), card("rtx5090", RTX_5090_MIB)] }),
      req({ candidates: cands([Q32, 80]) }),
    );
    expect(d).toMatchObject({ kind: "claim", provider: "rtx5090", cold: true, footprintMiB: F32 });
  });

  it("overlay example: the 5090's overlay holds 32b, so the 8b queues at the 4090's busy copy (≈73.4)", () => {
    const s = snapshot({
      providers: [
        card("rtx5090", RTX_5090_MIB),
        card("rtx4090", RTX_4090_MIB, { loadedModelFootprintsMiB: { [Q8]: F8 } }),
      ],
      residencies: [residency("rtx5090", Q32, F32)],
      tickets: Array.from({ length: 8 }, (_, i) => ticket("rtx4090", Q8, { claimedAtMs: T0 - i * 1000 })),
    });
    const d = decide(s, req({ candidates: cands([Q8, 80]) }));
    expect(d).toMatchObject({ kind: "claim", provider: "rtx4090", cold: false, step: 4 });
    if (d.kind === "claim") expect(d.cost).toBeCloseTo(73.38, 2);
  });
});

describe("§5 planner steps", () => {
  it("step 1: a warm preferred with a free slot wins over a cheaper-looking cold load", () => {
    const s = snapshot({
      providers: [
        card("big", 81920, { loadedModelFootprintsMiB: { [Q8]: F8 } }),
        card("small", RTX_4090_MIB),
      ],
    });
    expect(decide(s, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      provider: "big",
      step: 1,
      cold: false,
      loading: false,
    });
  });

  it("step 1 requires a free slot: a busy copy falls through to step 4's cost", () => {
    const s = snapshot({
      providers: [card("a", RTX_4090_MIB, { loadedModelFootprintsMiB: { [Q8]: F8 }, maxParallel: 2 })],
      tickets: [ticket("a", Q8), ticket("a", Q8)],
    });
    expect(decide(s, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      provider: "a",
      step: 4,
    });
  });

  it("step 2: a warm in-tolerance candidate with a free slot beats cold-loading the preferred", () => {
    const s = snapshot({
      providers: [card("a", RTX_5090_MIB, { loadedModelFootprintsMiB: { [Q14]: F14 } })],
    });
    const d = decide(s, req({ candidates: cands([Q32, 70], [Q14, 60]) }));
    expect(d).toMatchObject({ kind: "claim", model: Q14, step: 2, cold: false });
  });

  it("step 2: outside tolerance the candidate is not used", () => {
    const s = snapshot({
      providers: [
        card("a", RTX_5090_MIB, { loadedModelFootprintsMiB: { [Q14]: F14 } }),
        card("b", RTX_5090_MIB),
      ],
    });
    const d = decide(s, req({ candidates: cands([Q32, 70], [Q14, 59]) }));
    expect(d).toMatchObject({ kind: "claim", model: Q32, provider: "b", step: 4, cold: true });
  });

  it("step 2: highest score first, even when a lower-scored candidate is cheaper", () => {
    const s = snapshot({
      providers: [
        card("a", 81920, { loadedModelFootprintsMiB: { [Q14]: F14 } }),
        card("b", RTX_4090_MIB, { loadedModelFootprintsMiB: { [Q8]: F8 } }),
      ],
    });
    const d = decide(s, req({ candidates: cands([Q32, 70], [Q8, 62], [Q14, 65]) }));
    expect(d).toMatchObject({ kind: "claim", model: Q14, provider: "a", step: 2 });
  });

  it("step 3: converge on a copy another ticket is loading right now, even with its slot taken", () => {
    const s = snapshot({
      providers: [card("a", RTX_5090_MIB), card("b", RTX_5090_MIB)],
      tickets: [ticket("b", Q14, { modelFootprintMiB: F14, coldLoad: true })],
    });
    const d = decide(s, req({ candidates: cands([Q32, 70], [Q14, 65]) }));
    expect(d).toMatchObject({
      kind: "claim",
      provider: "b",
      model: Q14,
      step: 3,
      cold: false,
      loading: true,
    });
  });

  it("a copy another ticket plans to unload is not warm for this call", () => {
    const s = snapshot({
      providers: [
        card("a", RTX_5090_MIB, { loadedModelFootprintsMiB: { [Q8]: F8 } }),
        card("b", RTX_5090_MIB),
      ],
      tickets: [ticket("a", Q14, { modelFootprintMiB: F14, evicts: { [Q8]: F8 } })],
    });
    expect(decide(s, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      provider: "b",
      cold: true,
      step: 4,
    });
  });

  it("unknown occupancy never places a cold load", () => {
    // A provider that publishes no on-disk catalog may have the model: wait for memory.
    const s = snapshot({ providers: [card("a", 81920, { availableModelFootprintsMiB: {} })] });
    expect(decide(s, req({ candidates: cands(["mystery-model", 80]) }))).toMatchObject({
      kind: "wait-for-memory",
    });
  });

  it.each([
    ["not ready", { ready: false }, []],
    ["stale", { lastProbedAt: iso(T0 - 400_000) }, []],
    ["circuit open", {}, [T0 - 30, T0 - 20, T0 - 10]],
  ] as const)("skips a provider that is %s", (_l, over, failures) => {
    let circuit = CLOSED_CIRCUIT;
    for (const t of failures) circuit = recordFailure(circuit, t);
    const s = snapshot({
      providers: [
        card("a", 81920, { loadedModelFootprintsMiB: { [Q8]: F8 }, ...over }),
        card("b", RTX_4090_MIB),
      ],
      health: health([["a", { circuit }]]),
    });
    expect(decide(s, req({ candidates: cands([Q8, 80]) }))).toMatchObject({ kind: "claim", provider: "b" });
  });
});

describe("§5 step 5: queue or unload", () => {
  // Preferred qwen3:14b is warm nowhere; its in-tolerance alternative qwen2.5:14b is busy on
  // the 4090 (called for 20 s on average). Neither card has room for a cold 14b.
  const ALT = "qwen2.5:14b";
  const base = (
    altTickets: number,
    fiveOver: Parameters<typeof provider>[1],
    extra: Partial<PlacementSnapshot>,
  ) =>
    snapshot({
      providers: [
        card("rtx4090", RTX_4090_MIB, { loadedModelFootprintsMiB: { [ALT]: F14 } }),
        card("rtx5090", RTX_5090_MIB, fiveOver),
      ],
      tickets: [
        ...Array.from({ length: altTickets }, (_, i) =>
          ticket("rtx4090", ALT, { claimedAtMs: T0 - 5000 + i }),
        ),
        ...(extra.tickets ?? []),
      ],
      health: health([["rtx4090", { latencyEmaMs: 20_000 }]]),
      demand: extra.demand,
    });
  const request = req({ candidates: cands([Q14, 80], [ALT, 75]) });

  it("32b idle on the 5090 with recent use 1 (≈26 s to unload) vs a copy freeing in 15 s → queue", () => {
    const s = base(
      1,
      { loadedModelFootprintsMiB: { [Q32]: 27000 } },
      { demand: demand([[Q32, { recentUse: 1 }]]) },
    );
    const d = decide(s, request);
    expect(d).toMatchObject({ kind: "queue", provider: "rtx4090", model: ALT, estimatedWaitS: 15 });
    if (d.kind === "queue") expect(d.unloadCostS).toBeCloseTo(26.12, 2);
  });

  it("five calls queued there (95 s) vs an idle unwanted 8b (6000, ≈13 s) → unload the 8b", () => {
    // 5090: a busy 16000 model and an idle 8b. Cold 14b: 12224 + 22000 > 28693; need 5531 ≤ 6000.
    const s = base(
      5,
      { loadedModelFootprintsMiB: { "busy:20b": 16000, [Q8]: 6000 } },
      { tickets: [ticket("rtx5090", "busy:20b")] },
    );
    const d = decide(s, request);
    expect(d).toMatchObject({
      kind: "claim",
      provider: "rtx5090",
      model: Q14,
      cold: true,
      step: 5,
      evicts: { [Q8]: 6000 },
    });
    if (d.kind === "claim") expect(d.cost).toBeCloseTo(12.94, 2);
  });

  it("unload is the only option: no copy to queue at", () => {
    const s = snapshot({
      providers: [card("a", RTX_4090_MIB, { loadedModelFootprintsMiB: { [Q32]: 20000 } })],
    });
    expect(decide(s, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      step: 5,
      evicts: { [Q32]: 20000 },
    });
  });

  it("neither option: wait for memory (gpu-busy, no ticket)", () => {
    const s = snapshot({
      providers: [card("a", RTX_4090_MIB, { loadedModelFootprintsMiB: { [Q32]: 20000 } })],
      tickets: [ticket("a", Q32)],
    });
    const d = decide(s, req({ candidates: cands([Q8, 80]) }));
    expect(d).toMatchObject({ kind: "wait-for-memory", model: Q8 });
    if (d.kind === "wait-for-memory") expect(d.message).toMatch(/busy/);
  });

  it("equal waits: the earlier candidate, then the lower provider name", () => {
    const s = snapshot({
      providers: ["b", "a"].map((n) =>
        card(n, RTX_4090_MIB, { loadedModelFootprintsMiB: { [ALT]: F14, [Q8]: F8 } }),
      ),
      tickets: ["a", "b"].flatMap((n) => [ticket(n, ALT, { claimedAtMs: T0 - 1000 }), ticket(n, Q8)]),
      health: health([
        ["a", { latencyEmaMs: 20_000 }],
        ["b", { latencyEmaMs: 20_000 }],
      ]),
    });
    expect(decide(s, request)).toMatchObject({
      kind: "queue",
      provider: "a",
      model: ALT,
      estimatedWaitS: 19,
    });
  });

  it("never unloads a model other agents wait for when an unwanted one makes room", () => {
    const s = snapshot({
      providers: [card("a", RTX_5090_MIB, { loadedModelFootprintsMiB: { wanted: 20000, spare: 20000 } })],
      demand: demand([["wanted", { waiters: 1 }]]),
    });
    expect(decide(s, req({ candidates: cands([Q14, 80]) }))).toMatchObject({
      kind: "claim",
      evicts: { spare: 20000 },
    });
  });
});

describe("§3 the context filter on every path", () => {
  const ctx = (n: number) => ({ loadedModelContextLengths: { [Q8]: n } });
  it("a warm copy whose context is too short is skipped; equality fits", () => {
    const providers = [
      card("a", RTX_4090_MIB, { loadedModelFootprintsMiB: { [Q8]: F8 }, ...ctx(4096) }),
      card("b", RTX_4090_MIB, { contextLength: 8192 }),
    ];
    expect(
      decide(snapshot({ providers }), req({ candidates: cands([Q8, 80]), promptTokens: 4096 })),
    ).toMatchObject({
      provider: "a",
      contextLength: 4096,
    });
    expect(
      decide(snapshot({ providers }), req({ candidates: cands([Q8, 80]), promptTokens: 4097 })),
    ).toMatchObject({
      provider: "b",
      cold: true,
      contextLength: 8192,
    });
  });
  it("prompt-too-large when every provider that could hold the model gives too short a context", () => {
    const providers = [
      card("a", RTX_4090_MIB, { contextLength: 8192 }),
      card("b", RTX_5090_MIB, { contextLength: 4096 }),
    ];
    const d = decide(snapshot({ providers }), req({ candidates: cands([Q8, 80]), promptTokens: 10_000 }));
    expect(d).toMatchObject({ kind: "refuse", reason: "prompt-too-large", model: Q8, largestContext: 8192 });
    if (d.kind === "refuse") expect(d.message).toMatch(/8192/);
  });
  it("an unknown context never refuses", () => {
    const providers = [card("a", RTX_4090_MIB)];
    expect(
      decide(snapshot({ providers }), req({ candidates: cands([Q8, 80]), promptTokens: 10_000_000 })),
    ).toMatchObject({ kind: "claim" });
  });
});

describe("§3 refusals", () => {
  it("model-too-large: no provider with a known total has usable ≥ occ (names the model)", () => {
    const providers = [card("a", RTX_4090_MIB), card("b", RTX_5090_MIB), provider("c")];
    const d = decide(snapshot({ providers }), req({ candidates: cands(["llama3.1:70b", 80]) }));
    expect(d).toMatchObject({ kind: "refuse", reason: "model-too-large", model: "llama3.1:70b" });
    if (d.kind === "refuse") expect(d.message).toContain("llama3.1:70b");
  });
  it("providers with unknown totals never prove a model too large", () => {
    const d = decide(
      snapshot({ providers: [provider("c")] }),
      req({ candidates: cands(["llama3.1:70b", 80]) }),
    );
    expect(d).toMatchObject({ kind: "wait-for-memory" });
  });
  it("a too-large preferred still uses a warm in-tolerance candidate", () => {
    const providers = [card("a", RTX_4090_MIB, { loadedModelFootprintsMiB: { [Q8]: F8 } })];
    expect(
      decide(snapshot({ providers }), req({ candidates: cands(["llama3.1:70b", 80], [Q8, 75]) })),
    ).toMatchObject({ kind: "claim", model: Q8, step: 2 });
  });
  it("no candidate at all → gpu-busy refusal with a message", () => {
    const d = decide(snapshot(), req({ candidates: [] }));
    expect(d).toMatchObject({ kind: "refuse", reason: "gpu-busy", model: "" });
    if (d.kind === "refuse") expect(d.message.length).toBeGreaterThan(10);
  });
});

describe("§6 triage: only its bound model, never waits", () => {
  it("ignores warm alternatives", () => {
    const providers = [
      card("a", RTX_5090_MIB, { loadedModelFootprintsMiB: { [Q14]: F14 } }),
      card("b", RTX_4090_MIB),
    ];
    const r = req({ candidates: cands([Q8, 80], [Q14, 80]) });
    // A mulling call takes the warm alternative (step 2); triage loads its bound model.
    expect(decide(snapshot({ providers }), r)).toMatchObject({ kind: "claim", model: Q14, step: 2 });
    expect(decide(snapshot({ providers }), { ...r, phase: "triage" })).toMatchObject({
      kind: "claim",
      model: Q8,
      provider: "b",
    });
  });
  it("busy → gpu-busy refusal instead of waiting", () => {
    const providers = [card("a", RTX_4090_MIB, { loadedModelFootprintsMiB: { [Q32]: 20000 } })];
    const d = decide(
      snapshot({ providers, tickets: [ticket("a", Q32)] }),
      req({ candidates: cands([Q8, 80]), phase: "triage" }),
    );
    expect(d).toMatchObject({ kind: "refuse", reason: "gpu-busy", model: Q8 });
  });
});

describe("§4 ties", () => {
  it("equal cost: lower latency EMA, then provider name", () => {
    const providers = [card("b", RTX_4090_MIB), card("a", RTX_4090_MIB)];
    const r = req({ candidates: cands([Q8, 80]) });
    expect(decide(snapshot({ providers }), r)).toMatchObject({ provider: "a" });
    const h = health([
      ["b", { latencyEmaMs: 1000 }],
      ["a", { latencyEmaMs: 2000 }],
    ]);
    expect(decide(snapshot({ providers, health: h }), r)).toMatchObject({ provider: "b" });
  });
  it("CrewSchedulingPolicy biases add their own terms", () => {
    const providers = [card("a", RTX_4090_MIB), card("b", RTX_4090_MIB)];
    const r = req({ candidates: cands([Q8, 80]), costBias: (p) => (p === "a" ? 1 : 0) });
    expect(decide(snapshot({ providers }), r)).toMatchObject({ provider: "b" });
  });
});

describe("zero and negative inputs", () => {
  it("a negative or non-finite prompt size is unknown: it fits every context", () => {
    const providers = [card("a", RTX_4090_MIB, { contextLength: 2048 })];
    for (const promptTokens of [-5, Number.NaN, 0]) {
      expect(
        decide(snapshot({ providers }), req({ candidates: cands([Q8, 80]), promptTokens })),
      ).toMatchObject({
        kind: "claim",
      });
    }
  });
  it("negative published footprints count as zero, never as free room", () => {
    const providers = [card("a", 8192, { loadedModelFootprintsMiB: { junk: -50_000 } })];
    // usable(8192) = 6144 ≥ 5979: the 8b fits beside a zero-size resident, no more
    expect(decide(snapshot({ providers }), req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      cold: true,
    });
    const d = decide(snapshot({ providers }), req({ candidates: cands([Q14, 80]) }));
    expect(d).toMatchObject({ kind: "refuse", reason: "model-too-large" });
  });
  it("maxParallel 0 counts as one slot", () => {
    const providers = [card("a", RTX_4090_MIB, { loadedModelFootprintsMiB: { [Q8]: F8 }, maxParallel: 0 })];
    const s = snapshot({ providers, tickets: [ticket("a", Q8)] });
    expect(decide(s, req({ candidates: cands([Q8, 80]) }))).toMatchObject({ step: 4 });
  });
  it("a negative tolerance behaves as 0", () => {
    const providers = [
      card("a", RTX_5090_MIB, { loadedModelFootprintsMiB: { [Q14]: F14 } }),
      card("b", RTX_5090_MIB),
    ];
    const same = decide(
      snapshot({ providers }),
      req({ candidates: cands([Q32, 70], [Q14, 70]), tolerance: -3 }),
    );
    expect(same).toMatchObject({ model: Q14, step: 2 });
    const lower = decide(
      snapshot({ providers }),
      req({ candidates: cands([Q32, 70], [Q14, 69]), tolerance: -3 }),
    );
    expect(lower).toMatchObject({ model: Q32, step: 4 });
  });
});
