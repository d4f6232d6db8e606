// The default policy, by expected seconds (docs/rules/placement.md §5), and the rules both
// policies share since issue 16: refusals decided on the generous count, unknown models, cold
// loads only where the model is on disk, calls that cannot wait never queue, the engine's
// loaded-model limit.
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
} from "../../../test/helpers/core-fixtures.js";
import type { Candidate } from "../candidates.js";
import { MIN_RESIDENCY_LOADS } from "../constants.js";
import { type ModelDemand, NO_DEMAND } from "../demand.js";
import { decide, type PlanRequest } from "../planner.js";
import type { PlacementSnapshot, PolicyName, ProviderHealth } from "../snapshot.js";

const Q8 = "qwen3:8b";
const Q14 = "qwen3:14b";
const Q32 = "qwen3:32b";
const F8 = 5979;
const F14 = 12224;
const F32 = 27252;
const DISK = { [Q8]: F8 / 1.2, [Q14]: F14 / 1.2, [Q32]: F32 / 1.2 };
const POLICIES: PolicyName[] = ["time", "kubemoot"];

const cands = (...list: [string, number][]): Candidate[] => list.map(([model, score]) => ({ model, score }));
const req = (over: Partial<PlanRequest> & { candidates: Candidate[] }): PlanRequest => ({
  promptTokens: 1000,
  ...over,
});
function card(name: string, total: number, over: Parameters<typeof provider>[1] = {}) {
  return provider(name, { totalVramMiB: total, availableModelFootprintsMiB: DISK, ...over });
}
const warm = (
  name: string,
  total: number,
  model: string,
  mib: number,
  over: Parameters<typeof provider>[1] = {},
) => card(name, total, { loadedModelFootprintsMiB: { [model]: mib }, ...over });
const byTime = (s: PlacementSnapshot, r: PlanRequest) => decide(s, r, { policy: "time" });
const measured = (serviceS: number): ProviderHealth => ({
  latencyEmaMs: serviceS * 1000,
  serviceByModel: new Map([[Q8, serviceS * 1000]]),
});
const demand = (entries: [string, Partial<ModelDemand>][]) =>
  new Map(entries.map(([m, d]) => [m, { ...NO_DEMAND, ...d }]));

describe("time policy: a slot is a slot", () => {
  it("a warm claim needs a free slot: a busy single-slot copy is queued for, not claimed", () => {
    const providers = [warm("a", RTX_4090_MIB, Q8, F8)];
    const s = snapshot({ providers, tickets: [ticket("a", Q8, { claimedAtMs: T0 - 1_000 })] });
    const d = byTime(s, req({ candidates: cands([Q8, 80]) }));
    expect(d).toMatchObject({ kind: "queue", provider: "a", model: Q8 });
    // Kubemoot's weighted cost hands the call to the engine's queue instead.
    expect(decide(s, req({ candidates: cands([Q8, 80]) }), { policy: "kubemoot" })).toMatchObject({
      kind: "claim",
      provider: "a",
      cold: false,
    });
  });

  it("queues while the copy frees sooner than a cold load elsewhere, and loads once it does not", () => {
    // 8b: 5979 MiB at 1024 MiB/s ≈ 5.84 s to load. Calls take 5 s (measured).
    const providers = [warm("a", RTX_4090_MIB, Q8, F8), card("b", RTX_5090_MIB)];
    const health = new Map([
      ["a", measured(5)],
      ["b", measured(5)],
    ]);
    const one = snapshot({ providers, health, tickets: [ticket("a", Q8, { claimedAtMs: T0 - 1_000 })] });
    // One call 1 s in: 4 s left < 5.84 s of load.
    expect(byTime(one, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "queue",
      estimatedWaitS: 4,
    });
    // Two more queued behind it: 4 + 2·5 = 14 s > 5.84 s: load a second copy on the idle card.
    const three = snapshot({
      providers,
      health,
      tickets: [
        ticket("a", Q8, { claimedAtMs: T0 - 1_000 }),
        ticket("a", Q8, { claimedAtMs: T0 - 500 }),
        ticket("a", Q8, { claimedAtMs: T0 - 200 }),
      ],
    });
    expect(byTime(three, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      provider: "b",
      cold: true,
      step: 4,
    });
  });

  it("a second copy costs more where other models in demand could use its room", () => {
    const providers = [warm("a", RTX_4090_MIB, Q8, F8), card("b", RTX_5090_MIB)];
    const health = new Map([
      ["a", measured(5)],
      ["b", measured(5)],
    ]);
    // One call 1 s in and one queued: a wait of 4 + 5 = 9 s, 14 s to finish; a second copy on b
    // loads in 5.84 s and finishes in 10.84 s.
    const tickets = [
      ticket("a", Q8, { claimedAtMs: T0 - 1_000 }),
      ticket("a", Q8, { claimedAtMs: T0 - 500 }),
    ];
    const free = snapshot({ providers, health, tickets });
    expect(byTime(free, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      provider: "b",
    });
    // Agents wait for 14b, which b could hold: the copy's load counts 1.5 times (8.76 + 5 s),
    // no sooner than the queue, so the call queues and b's room stays whole.
    const wanted = snapshot({ providers, health, tickets, demand: demand([[Q14, { waiters: 1 }]]) });
    expect(byTime(wanted, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "queue",
      provider: "a",
    });
  });

  it("a warm alternative with a free slot comes before loading the preferred", () => {
    const providers = [warm("a", RTX_4090_MIB, Q14, F14), card("b", RTX_5090_MIB)];
    expect(byTime(snapshot({ providers }), req({ candidates: cands([Q8, 80], [Q14, 75]) }))).toMatchObject({
      kind: "claim",
      provider: "a",
      model: Q14,
      step: 2,
    });
  });

  for (const policy of POLICIES) {
    it(`${policy}: calls that cannot wait never queue behind others, and triage neither`, () => {
      const providers = [warm("a", RTX_4090_MIB, Q8, F8, { availableModelFootprintsMiB: {} })];
      const s = snapshot({ providers, tickets: [ticket("a", Q8)] });
      for (const r of [
        req({ candidates: cands([Q8, 80]), cannotWait: true }),
        req({ candidates: cands([Q8, 80]), phase: "triage" }),
      ]) {
        expect(decide(s, r, { policy })).toMatchObject({ kind: "refuse", reason: "gpu-busy" });
      }
    });
  }
});

describe("time policy: an unload pays for itself", () => {
  const full = (over: Partial<PlacementSnapshot> = {}) =>
    snapshot({ providers: [warm("a", 16384, Q14, F14)], ...over });

  it("unloads an idle copy nobody waits for", () => {
    expect(byTime(full(), req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      step: 5,
      evicts: { [Q14]: F14 },
    });
  });

  it("keeps a copy others wait for until it has been resident a few of its load times", () => {
    const loadS = F14 / 1024;
    const waited = demand([[Q14, { waiters: 2 }]]);
    const recent = full({
      demand: waited,
      residencies: [{ ...residency("a", Q14, F14), writtenAt: T0 - 1_000 }],
    });
    expect(byTime(recent, req({ candidates: cands([Q8, 80]) }))).toMatchObject({ kind: "wait-for-memory" });
    const old = full({
      demand: waited,
      residencies: [
        { ...residency("a", Q14, F14), writtenAt: T0 - (MIN_RESIDENCY_LOADS * loadS + 1) * 1000 },
      ],
    });
    expect(byTime(old, req({ candidates: cands([Q8, 80]) }))).toMatchObject({ kind: "claim", step: 5 });
    // More agents waiting for the requested model than for the copy: no grace.
    const more = full({
      demand: demand([
        [Q14, { waiters: 2 }],
        [Q8, { waiters: 3 }],
      ]),
      residencies: [{ ...residency("a", Q14, F14), writtenAt: T0 - 1_000 }],
    });
    expect(byTime(more, req({ candidates: cands([Q8, 80]) }))).toMatchObject({ kind: "claim", step: 5 });
    // But a copy called since it loaded is in use, idle only between calls: it keeps its grace
    // whoever waits for the other model.
    const inUse = full({
      demand: demand([
        [Q14, { lastUsedAtMs: T0 - 200 }],
        [Q8, { waiters: 3 }],
      ]),
      residencies: [{ ...residency("a", Q14, F14), writtenAt: T0 - 1_000 }],
    });
    expect(byTime(inUse, req({ candidates: cands([Q8, 80]) }))).toMatchObject({ kind: "wait-for-memory" });
  });

  it("an embedding model's copy runs one call at a time: calls spread over copies, then queue at the engine", () => {
    const EMB = "nomic-embed-text:latest";
    const one = { maxParallel: 4, singleSlotModels: [EMB] };
    const busyA = [ticket("a", EMB, { claimedAtMs: T0 - 1_000 })];
    const both = (over: Parameters<typeof provider>[1]) => [
      warm("a", RTX_4090_MIB, EMB, 300, over),
      warm("b", RTX_4090_MIB, EMB, 300, over),
    ];
    const emb = req({ candidates: cands([EMB, 80]) });
    // a's copy is busy with one call: the next goes to b's idle copy...
    expect(byTime(snapshot({ providers: both(one), tickets: busyA }), emb)).toMatchObject({
      kind: "claim",
      provider: "b",
    });
    // ...where, with four slots, a's copy is free too: a tie, which the emptier copy wins...
    expect(byTime(snapshot({ providers: both({ maxParallel: 4 }), tickets: busyA }), emb)).toMatchObject({
      kind: "claim",
      provider: "b",
    });
    // ...and between equally empty copies, the lower name.
    expect(byTime(snapshot({ providers: both({ maxParallel: 4 }), tickets: [] }), emb)).toMatchObject({
      kind: "claim",
      provider: "a",
    });
    // With one copy, the call is handed to the engine's queue (up to its slots), not held here:
    // a short call starts the moment the one before it ends.
    const alone = [warm("a", RTX_4090_MIB, EMB, 300, one)];
    expect(byTime(snapshot({ providers: alone, tickets: busyA }), emb)).toMatchObject({
      kind: "claim",
      provider: "a",
      slots: 4,
    });
    const full = [0, 1, 2, 3].map((i) => ticket("a", EMB, { claimedAtMs: T0 - 1_000 + i }));
    expect(byTime(snapshot({ providers: alone, tickets: full }), emb)).toMatchObject({ kind: "queue" });
  });

  it("a copy that others keep busy stops taking calls once it has served its residency, so a model that waits gets its turn", () => {
    // 14b fills the 16 GiB card; 8b cannot join it. 14b's callers keep it busy (one live
    // ticket, slots free), so it is never idle: without draining, 8b would wait forever.
    const loadS = F14 / 1024;
    const busy = (writtenAt: number, over: Partial<PlacementSnapshot> = {}) =>
      full({
        providers: [warm("a", 16384, Q14, F14, { maxParallel: 4 })],
        demand: demand([[Q8, { waiters: 3 }]]),
        tickets: [ticket("a", Q14, { claimedAtMs: T0 - 500 })],
        residencies: [{ ...residency("a", Q14, F14), writtenAt }],
        ...over,
      });
    const served = T0 - (MIN_RESIDENCY_LOADS * loadS + 1) * 1000;
    const r14 = req({ candidates: cands([Q14, 80]) });
    // Served its residency: new 14b calls queue (the copy drains) instead of taking a slot.
    expect(byTime(busy(served), r14)).toMatchObject({ kind: "queue", provider: "a", model: Q14 });
    // Freshly loaded: it keeps serving.
    expect(byTime(busy(T0 - 1_000), r14)).toMatchObject({ kind: "claim", provider: "a", cold: false });
    // The copy's own load time, when its overlay measured it, sets the residency: loaded in 1 s,
    // it drains 3 s after, long before the estimate (≈12 s a load) would let it.
    const quick = (writtenAt: number) =>
      busy(writtenAt, { residencies: [{ ...residency("a", Q14, F14), writtenAt, loadMs: 1_000 }] });
    expect(byTime(quick(T0 - (MIN_RESIDENCY_LOADS + 1) * 1000), r14)).toMatchObject({ kind: "queue" });
    expect(byTime(quick(T0 - (MIN_RESIDENCY_LOADS - 1) * 1000), r14)).toMatchObject({ kind: "claim" });
    // Calls that cannot wait are still served: they never queue.
    expect(byTime(busy(served), req({ candidates: cands([Q14, 80]), cannotWait: true }))).toMatchObject({
      kind: "claim",
      cold: false,
    });
    // More agents wait for 14b than for 8b: 14b keeps its card.
    const more = busy(served, {
      demand: demand([
        [Q8, { waiters: 3 }],
        [Q14, { waiters: 4 }],
      ]),
    });
    expect(byTime(more, r14)).toMatchObject({ kind: "claim", cold: false });
    // 8b has room elsewhere: nothing needs this card.
    const elsewhere = busy(served, {
      providers: [warm("a", 16384, Q14, F14, { maxParallel: 4 }), card("b", RTX_4090_MIB)],
    });
    expect(byTime(elsewhere, r14)).toMatchObject({ kind: "claim", provider: "a", cold: false });
    // And 8b's waiters get the unload once the copy is idle.
    const idle = busy(served, { tickets: [] });
    expect(byTime(idle, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      step: 5,
      evicts: { [Q14]: F14 },
    });
  });

  it("a cold load on free room is preferred to an unload of equal speed", () => {
    const providers = [warm("a", 16384, Q14, F14), card("b", 16384)];
    expect(byTime(snapshot({ providers }), req({ candidates: cands([Q8, 80]) }))).toMatchObject({
      kind: "claim",
      provider: "b",
      step: 4,
      evicts: {},
    });
  });
});

describe("both policies: the engine's loaded-model limit is room too", () => {
  for (const policy of POLICIES) {
    it(`${policy}: a fourth model on a card that keeps three loads only after an unload`, () => {
      const loaded = { "m1:1b": 1000, "m2:1b": 1000, "m3:1b": 1000 };
      const providers = [
        card("a", RTX_5090_MIB, {
          loadedModelFootprintsMiB: loaded,
          maxLoadedModels: 3,
          availableModelFootprintsMiB: { ...DISK, ...loaded },
        }),
      ];
      const d = decide(snapshot({ providers }), req({ candidates: cands([Q8, 80]) }), { policy });
      expect(d).toMatchObject({ kind: "claim", provider: "a", cold: true });
      if (d.kind === "claim") expect(Object.keys(d.evicts)).toHaveLength(1);
      const unlimited = [card("a", RTX_5090_MIB, { loadedModelFootprintsMiB: loaded })];
      expect(
        decide(snapshot({ providers: unlimited }), req({ candidates: cands([Q8, 80]) }), { policy }),
      ).toMatchObject({
        kind: "claim",
        evicts: {},
      });
    });
  }
});

describe("both policies: refusals", () => {
  for (const policy of POLICIES) {
    const plan = (s: PlacementSnapshot, r: PlanRequest) => decide(s, r, { policy });
    describe(policy, () => {
      it("an estimate that fits no context is placed by its generous count before any refusal", () => {
        const providers = [
          card("a", RTX_4090_MIB, { contextLength: 8192 }),
          card("b", RTX_5090_MIB, { contextLength: 4096 }),
        ];
        const placed = plan(
          snapshot({ providers }),
          req({ candidates: cands([Q8, 80]), promptTokens: 10_000, generousPromptTokens: 6_000 }),
        );
        expect(placed).toMatchObject({ kind: "claim", provider: "a", contextLength: 8192 });
        const refused = plan(
          snapshot({ providers }),
          req({ candidates: cands([Q8, 80]), promptTokens: 10_000, generousPromptTokens: 9_000 }),
        );
        expect(refused).toMatchObject({ kind: "refuse", reason: "prompt-too-large", largestContext: 8192 });
        if (refused.kind === "refuse") expect(refused.message).toMatch(/9000/);
      });

      it("a model no provider has (loaded or on disk) is refused as unknown at once, naming it", () => {
        const s = snapshot({ providers: [card("a", 81920), card("b", RTX_4090_MIB)] });
        for (const model of ["mystery-model", "nosuch:1b"]) {
          const d = plan(s, req({ candidates: cands([model, 80]) }));
          expect(d).toMatchObject({ kind: "refuse", reason: "model-unknown", model });
          if (d.kind === "refuse") expect(d.message).toContain(`"${model}"`);
        }
      });

      it("a cold load goes only where the model is on disk", () => {
        const onlyB = snapshot({
          providers: [
            card("a", RTX_5090_MIB, { availableModelFootprintsMiB: { "other:1b": 900 } }),
            card("b", RTX_4090_MIB),
          ],
        });
        expect(plan(onlyB, req({ candidates: cands([Q8, 80]) }))).toMatchObject({
          kind: "claim",
          provider: "b",
        });
      });
      it("a dead provider's copy is unavailable, not busy", () => {
        const providers = [warm("a", RTX_4090_MIB, Q8, F8, { ready: false, lastProbedAt: iso(T0) })];
        expect(plan(snapshot({ providers }), req({ candidates: cands([Q8, 80]) }))).toMatchObject({
          kind: "refuse",
          reason: "provider-unavailable",
        });
      });
    });
  }
});

describe("time policy: a warm alternative against loading the preferred", () => {
  const VL = "Qwen/Qwen3-14B";
  const vllm = provider("v", {
    engine: "vllm",
    maxParallel: 16,
    loadedModels: [VL],
    loadedModelContextLengths: { [VL]: 32768 },
    contextLength: 32768,
    availableModelFootprintsMiB: {},
  });
  // The Ollama 14b measured at 10 s: the unmeasured 8b is priced by size, 10 · F8/F14 ≈ 4.9 s.
  const at = (vlServiceS: number) =>
    snapshot({
      providers: [warm("a", RTX_4090_MIB, Q14, F14), vllm],
      demand: demand([
        [Q14, { serviceMs: 10_000 }],
        [VL, { serviceMs: vlServiceS * 1000 }],
      ]),
    });

  it("loads the preferred when its load and service finish sooner than the alternative's call", () => {
    // 8b: 5.84 s of load + 4.9 s of service ≈ 10.7 s, against 15 s on the batching vLLM server.
    expect(byTime(at(15), req({ candidates: cands([Q8, 80], [VL, 76]) }))).toMatchObject({
      kind: "claim",
      provider: "a",
      model: Q8,
      cold: true,
      step: 4,
    });
  });

  it("a free slot on a warm Ollama alternative still comes first, even when a load looks faster", () => {
    const s = snapshot({
      providers: [warm("a", RTX_4090_MIB, Q14, F14)],
      demand: demand([[Q14, { serviceMs: 15_000 }]]),
    });
    expect(byTime(s, req({ candidates: cands([Q8, 80], [Q14, 76]) }))).toMatchObject({
      kind: "claim",
      provider: "a",
      model: Q14,
      step: 2,
    });
  });

  it("takes the warm alternative when it finishes no later than loading the preferred", () => {
    expect(byTime(at(11), req({ candidates: cands([Q8, 80], [VL, 76]) }))).toMatchObject({
      kind: "claim",
      provider: "v",
      model: VL,
      step: 2,
    });
  });
});
