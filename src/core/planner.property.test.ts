// Properties of the planner over random snapshots (fast-check). The checks re-derive every
// rule from the wire shapes with vram.ts and context-fit.ts, not from the planner's index.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { iso, provider, T0, ticket } from "../../test/helpers/core-fixtures.js";
import { inTolerance } from "./candidates.js";
import { type CircuitState, CLOSED_CIRCUIT, circuitOpen } from "./circuit-breaker.js";
import { contextOf } from "./context-fit.js";
import { NO_DEMAND } from "./demand.js";
import { isStale } from "./eligibility.js";
import { decide, type PlanRequest } from "./planner.js";
import type { ProviderState, Residency, Ticket } from "./shapes.js";
import type { PlacementSnapshot, ProviderHealth } from "./snapshot.js";
import { claimFits, residentModels, ticketLive, usableMiB } from "./vram.js";

const MODELS: [string, number][] = [
  ["tiny:1b", 1824],
  ["qwen3:8b", 5979],
  ["qwen3:14b", 12224],
  ["qwen3:32b", 27252],
  ["big:70b", 45000],
  ["mystery", 0], // no size anywhere: unknown occupancy
];
const NAMES = MODELS.map(([m]) => m);
const PROVIDERS = ["p0", "p1", "p2", "p3", "p4"];

const providerArb = (name: string) =>
  fc
    .record({
      total: fc.constantFrom(0, 8192, 16384, 24563, 32605, 81920),
      ready: fc.integer({ min: 0, max: 3 }).map((n) => n !== 0),
      stale: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      maxParallel: fc.integer({ min: 1, max: 3 }),
      resident: fc.subarray(NAMES.slice(0, 5), { maxLength: 3 }),
      residentScale: fc.constantFrom(1, 0.9, 1.1),
      contextLength: fc.constantFrom(0, 2048, 8192, 32768),
      loadedCtx: fc.constantFrom(0, 4096, 40960),
      circuitOpen: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      latency: fc.option(fc.constantFrom(500, 5000, 20_000), { nil: undefined }),
    })
    .map((g) => ({ name, ...g }));

const ticketArb = fc.record({
  provider: fc.constantFrom(...PROVIDERS),
  model: fc.constantFrom(...NAMES),
  cold: fc.option(fc.boolean(), { nil: undefined }),
  ageS: fc.constantFrom(0, 5, 30, 119), // few values: ties in queue waits happen
  leaseS: fc.integer({ min: -20, max: 150 }),
  evict: fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
});

const residencyArb = fc.record({
  provider: fc.constantFrom(...PROVIDERS),
  model: fc.constantFrom(...NAMES.slice(0, 5)),
  scale: fc.constantFrom(1, 1.05),
});

const requestArb: fc.Arbitrary<PlanRequest> = fc.record({
  candidates: fc
    .shuffledSubarray(NAMES, { minLength: 1, maxLength: 4 })
    .chain((ms) =>
      fc
        .tuple(...ms.map(() => fc.integer({ min: 40, max: 90 })))
        .map((scores) => ms.map((model, i) => ({ model, score: scores[i]! }))),
    ),
  tolerance: fc.option(fc.integer({ min: -5, max: 30 }), { nil: undefined }),
  promptTokens: fc.constantFrom(0, 1000, 4096, 8192, 20_000, 50_000),
  phase: fc.constantFrom("mulling" as const, "mulling" as const, "triage" as const),
});

const snapshotArb: fc.Arbitrary<PlacementSnapshot> = fc
  .record({
    providers: fc.tuple(...PROVIDERS.map(providerArb)).chain((ps) => fc.subarray(ps, { minLength: 1 })),
    tickets: fc.array(ticketArb, { maxLength: 10 }),
    residencies: fc.array(residencyArb, { maxLength: 3 }),
    demand: fc.dictionary(
      fc.constantFrom(...NAMES),
      fc.record({ waiters: fc.nat(2), intents: fc.nat(2), recentUse: fc.nat(3), predicted: fc.nat(3) }),
    ),
  })
  .map(({ providers, tickets, residencies, demand }) => {
    const size = new Map(MODELS);
    const disk: Record<string, number> = {};
    for (const [m, f] of MODELS) if (f > 0) disk[m] = f / 1.2;
    const states: ProviderState[] = providers.map((g) => {
      const loaded: Record<string, number> = {};
      for (const m of g.resident) loaded[m] = Math.round(size.get(m)! * g.residentScale);
      const ctx: Record<string, number> = {};
      if (g.loadedCtx > 0) for (const m of g.resident) ctx[m] = g.loadedCtx;
      return provider(g.name, {
        totalVramMiB: g.total,
        ready: g.ready,
        lastProbedAt: g.stale ? iso(T0 - 600_000) : iso(T0 - 1000),
        maxParallel: g.maxParallel,
        loadedModelFootprintsMiB: loaded,
        availableModelFootprintsMiB: disk,
        contextLength: g.contextLength,
        loadedModelContextLengths: ctx,
      });
    });
    const health = new Map<string, ProviderHealth>();
    for (const g of providers) {
      const circuit: CircuitState = g.circuitOpen
        ? { failuresMs: [], openUntilMs: T0 + 30_000 }
        : CLOSED_CIRCUIT;
      health.set(g.name, { circuit, latencyEmaMs: g.latency });
    }
    const ts: Ticket[] = tickets.map((t) =>
      ticket(t.provider, t.model, {
        modelFootprintMiB: size.get(t.model)!,
        coldLoad: t.cold,
        claimedAtMs: T0 - t.ageS * 1000,
        expiresAt: T0 + t.leaseS * 1000,
        evicts: t.evict === undefined || t.evict === t.model ? {} : { [t.evict]: size.get(t.evict)! },
      }),
    );
    const rs: Residency[] = residencies.map((r) => ({
      provider: r.provider,
      modelName: r.model,
      modelFootprintMiB: Math.round(size.get(r.model)! * r.scale),
    }));
    const dm = new Map(Object.entries(demand).map(([m, d]) => [m, { ...NO_DEMAND, ...d }]));
    return { providers: states, tickets: ts, residencies: rs, demand: dm, health, nowMs: T0 };
  });

function shuffle<T>(xs: readonly T[], keys: number[]): T[] {
  return xs
    .map((x, i) => ({ x, k: keys[i % Math.max(1, keys.length)]! * 31 + i }))
    .sort((a, b) => a.k - b.k)
    .map((e) => e.x);
}

describe("planner properties", () => {
  it("the decision is independent of the order of providers, tickets and residencies", () => {
    fc.assert(
      fc.property(
        snapshotArb,
        requestArb,
        fc.array(fc.nat(1000), { minLength: 1, maxLength: 12 }),
        (s, r, keys) => {
          const shuffled: PlacementSnapshot = {
            ...s,
            providers: shuffle([...s.providers].reverse(), keys),
            tickets: shuffle([...s.tickets].reverse(), keys),
            residencies: shuffle([...s.residencies].reverse(), keys),
          };
          expect(decide(shuffled, r)).toEqual(decide(s, r));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never returns a claim that violates the VRAM or context filter; victims are idle and make room", () => {
    let claims = 0;
    let evictions = 0;
    fc.assert(
      fc.property(snapshotArb, requestArb, (s, r) => {
        const d = decide(s, r);
        if (d.kind !== "claim") return;
        claims++;
        const state = s.providers.find((p) => p.name === d.provider)!;
        const health = s.health?.get(d.provider);
        // Eligible provider.
        expect(state.ready).toBe(true);
        expect(isStale(state.lastProbedAt, T0)).toBe(false);
        expect(circuitOpen(health?.circuit, T0)).toBe(false);
        // An acceptable model (triage: its bound model only).
        const acceptable =
          r.phase === "triage"
            ? [r.candidates[0]!.model]
            : inTolerance(r.candidates, r.tolerance).map((c) => c.model);
        expect(acceptable).toContain(d.model);
        // Context holds the prompt (unknown holds; equality fits).
        const ctx = contextOf(state, d.model);
        if (ctx !== undefined && (r.promptTokens ?? 0) > 0) expect(r.promptTokens!).toBeLessThanOrEqual(ctx);
        const onP = s.tickets.filter((t) => t.provider === d.provider && ticketLive(t, T0));
        const resident = residentModels(
          state,
          s.residencies.filter((x) => x.provider === d.provider),
        );
        const planned = new Set(onP.flatMap((t) => Object.keys(t.evicts)));
        if (!d.cold) {
          // Warm: resident and not planned for unload, or loading by a live ticket (any ticket
          // on a model that is not resident loads it, whatever it says of itself).
          const loading = !resident.has(d.model) && onP.some((t) => t.modelName === d.model);
          expect((resident.has(d.model) && !planned.has(d.model)) || loading).toBe(true);
          expect(d.loading).toBe(loading);
          expect(d.evicts).toEqual({});
          return;
        }
        // Cold: known occupancy that fits the card and the claim budget (with its own victims).
        expect(resident.has(d.model)).toBe(false);
        expect(d.loading).toBe(false);
        expect(onP.some((t) => t.modelName === d.model && t.coldLoad !== false)).toBe(false);
        expect(d.footprintMiB).toBeGreaterThan(0);
        expect(d.footprintMiB).toBeLessThanOrEqual(usableMiB(state.totalVramMiB));
        expect(
          claimFits(
            state,
            onP,
            s.residencies.filter((x) => x.provider === d.provider),
            { modelName: d.model, modelFootprintMiB: d.footprintMiB, evicts: d.evicts },
            T0,
          ),
        ).toBe(true);
        const victims = Object.keys(d.evicts);
        if (d.step !== 5) expect(victims).toEqual([]);
        if (victims.length > 0) evictions++;
        for (const v of victims) {
          expect(v).not.toBe(d.model);
          expect(acceptable[0]).toBe(d.model);
          expect(resident.has(v)).toBe(true);
          expect(onP.some((t) => t.modelName === v)).toBe(false); // no in-flight work
          expect(planned.has(v)).toBe(false); // not planned by another ticket
          expect(d.evicts[v]).toBe(resident.get(v));
        }
      }),
      { numRuns: 1500 },
    );
    // The generator must exercise the interesting paths, or the property proves little.
    expect(claims).toBeGreaterThan(300);
    expect(evictions).toBeGreaterThan(5);
  });
});
