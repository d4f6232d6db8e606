// Model-based test of fair admission across crews (docs/rules/fairness.md §6–§8). A virtual
// clock drives a small fleet: 2–4 sidecars share one store holding the waiter records of a model,
// each process's service counter per crew, and the model's true count of claimed slots. Calls of
// 2–3 crews arrive, pass the real gate (fairGate over crewServices, every decision by the core),
// claim a slot by compare-and-set, run and complete; a waiter writes its record, renews it, and
// tries again on every slot change or at the latest after its timer (1 s, or the handoff time
// when it was held back while slots were free). Views of the store may lag up to k steps behind;
// sidecars die (their waiters vanish, their records run out, their slots free at lease end).
// No real timers, no I/O.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BANDS,
  BURST_END_MS,
  type CallSpec,
  crewName,
  Fleet,
  fairCall,
  LEASE_MS,
  MAX_STALENESS,
  O,
  REAL,
  REPLAN_MS,
  type Scenario,
  type Variant,
} from "../../test/helpers/fair-share-model.js";
import { crewServices, type FairCall, rankOf, serviceTokens, waitersAhead } from "./fair-share.js";

// ---- scenarios ----

const weightsArb = (crews: number) =>
  fc.array(fc.constantFrom(1, 2, 4), { minLength: crews, maxLength: crews });
const shapeArb = fc.record({
  slots: fc.integer({ min: 1, max: 3 }),
  sidecars: fc.integer({ min: 2, max: 4 }),
  crews: fc.integer({ min: 2, max: 3 }),
});

const callArb = (
  sidecars: number,
  crews: number,
  atMax: number,
  durationMax: number,
  band = fc.constantFrom(...BANDS),
) =>
  fc.record({
    // On a 50 ms grid: simultaneous events happen.
    at: fc.integer({ min: 0, max: atMax / 50 }).map((x) => x * 50),
    sidecar: fc.integer({ min: 0, max: sidecars - 1 }),
    crew: fc.integer({ min: 0, max: crews - 1 }),
    band,
    prompt: fc.integer({ min: 1, max: 2000 }),
    output: fc.integer({ min: 0, max: 500 }),
    durationMs: fc.integer({ min: 100, max: durationMax }),
  });

/** Calls over 10 s; stale views and deaths until some time within 15 s, then fresh views. */
const staleFleetArb: fc.Arbitrary<Scenario> = shapeArb.chain(({ slots, sidecars, crews }) =>
  fc.record({
    slots: fc.constant(slots),
    sidecars: fc.constant(sidecars),
    weights: weightsArb(crews),
    calls: fc.array(callArb(sidecars, crews, 10_000, 4_000), { minLength: 3, maxLength: 16 }),
    deaths: fc.uniqueArray(
      fc.record({
        sidecar: fc.integer({ min: 0, max: sidecars - 1 }),
        at: fc.integer({ min: 0, max: 12_000 }),
        leaseMs: fc.integer({ min: 0, max: 20_000 }),
      }),
      { selector: (d) => d.sidecar, maxLength: sidecars - 1 },
    ),
    staleness: fc.array(fc.integer({ min: 0, max: MAX_STALENESS }), { minLength: 1, maxLength: 16 }),
    order: fc.array(fc.nat({ max: 1000 }), { maxLength: 16 }),
    freshFrom: fc.integer({ min: 0, max: 15_000 }),
  }),
);

const FRESH = { deaths: [], staleness: [0], freshFrom: 0 };

/** Fresh views, no deaths, calls of every band over 8 s. */
const freshFleetArb: fc.Arbitrary<Scenario> = shapeArb.chain(({ slots, sidecars, crews }) =>
  fc
    .record({
      slots: fc.constant(slots),
      sidecars: fc.constant(sidecars),
      weights: weightsArb(crews),
      calls: fc.array(callArb(sidecars, crews, 8_000, 3_000), { minLength: 4, maxLength: 16 }),
      order: fc.array(fc.nat({ max: 1000 }), { maxLength: 16 }),
    })
    .map((s) => ({ ...s, ...FRESH })),
);

/**
 * Fresh views, no deaths, one band: every crew sends more calls than there are slots at once
 * (within BURST_END_MS, before any call can end), and more later.
 */
const backloggedArb: fc.Arbitrary<Scenario> = shapeArb.chain(({ slots, sidecars, crews }) =>
  fc
    .record({
      band: fc.constantFrom(...BANDS),
      weights: weightsArb(crews),
      burst: fc.array(fc.array(callArb(sidecars, 1, 0, 2_000), { minLength: slots + 1, maxLength: 10 }), {
        minLength: crews,
        maxLength: crews,
      }),
      later: fc.array(fc.array(callArb(sidecars, 1, 25_000, 2_000), { maxLength: 10 }), {
        minLength: crews,
        maxLength: crews,
      }),
      spread: fc.array(fc.integer({ min: 0, max: BURST_END_MS }), { minLength: 1, maxLength: 8 }),
      order: fc.array(fc.nat({ max: 1000 }), { maxLength: 16 }),
    })
    .map(({ band, weights, burst, later, spread, order }) => {
      const calls: CallSpec[] = [];
      for (const [crew, cs] of burst.entries())
        for (const [i, c] of cs.entries())
          calls.push({ ...c, crew, band, at: spread[(crew + i) % spread.length]! });
      for (const [crew, cs] of later.entries()) for (const c of cs) calls.push({ ...c, crew, band });
      return { slots, sidecars, weights, calls, order, ...FRESH };
    }),
);

/** When arrivals and deaths have stopped and views are fresh. */
function quietAt(sc: Scenario): number {
  return Math.max(sc.freshFrom, ...sc.calls.map((c) => c.at), ...sc.deaths.map((d) => d.at));
}

const maxDuration = (sc: Scenario) => Math.max(...sc.calls.map((c) => c.durationMs));
const maxLease = (sc: Scenario) => Math.max(0, ...sc.deaths.map((d) => d.leaseMs));

/**
 * Property 2's bound on a waiter's admission after the quiet time, with n calls waiting then.
 * With fresh views, a slot truly free while a live call waits is taken within REPLAN_MS +
 * handoffMs + 1: every waiter attempts within REPLAN_MS; the best-ranked live one is admitted
 * unless dead sidecars' records rank before it, and then it takes the slot by the handoff
 * handoffMs + 1 later (its handoff clock is only reset by an attempt that sees no free slot,
 * i.e. after someone else took it). Every call running at the quiet time ends within
 * max(max duration, max dead lease); from then on, within each (max duration + REPLAN_MS +
 * handoffMs + 1) some waiter is admitted. No call arrives any more, so at most n − 1 others are
 * admitted before a given waiter. The count is of all waiters, not those ranked ahead at the
 * quiet time: ranks move after it (a crew's running calls charge its output at completion, a
 * waiter rises one band per agingMs), so band aging needs no term of its own.
 */
function livenessBound(sc: Scenario, waiting: number): number {
  const d = maxDuration(sc);
  return Math.max(d, maxLease(sc)) + waiting * (d + REPLAN_MS + O.handoffMs + 1);
}

// ---- properties ----

function assertNoOvercommit(sc: Scenario, v: Variant): void {
  const check = (f: Fleet) => {
    const holders = f.calls.filter((c) => c.phase === "running").length;
    if (f.used > sc.slots || holders > sc.slots || holders !== f.used)
      throw new Error(`overcommit at ${f.now} ms: ${holders} holders, ${f.used} claimed of ${sc.slots}`);
  };
  const f = new Fleet(sc, v, { onAdmit: check, onStep: check });
  f.run(quietAt(sc) + livenessBound(sc, sc.calls.length) + maxDuration(sc) + 1);
}

/** A call that ranks after any live record (a batch call arriving after now). */
const probe = (nowMs: number): FairCall => ({
  id: "~probe",
  crew: "~",
  band: "batch",
  weight: 1,
  since: nowMs + 1,
});

function assertLeases(f: Fleet): void {
  for (const r of f.queue.values()) {
    const died = f.deadAt.get(f.byId.get(r.id)!.spec.sidecar);
    if (died === undefined) continue;
    if (r.expiresAt > died + LEASE_MS)
      throw new Error(`${r.id}'s record outlives its dead sidecar: ${r.expiresAt} > ${died} + ${LEASE_MS}`);
    if (f.now >= died + LEASE_MS && waitersAhead(probe(f.now), [r], new Map(), f.now, O) !== 0)
      throw new Error(`${r.id}'s record still counts ${f.now - died} ms after its sidecar died`);
  }
  for (const c of f.calls)
    if (c.phase === "waiting" && !((f.queue.get(c.id)?.expiresAt ?? 0) > f.now))
      throw new Error(`${c.id} waits at ${f.now} ms without a live record`);
}

function assertLiveness(sc: Scenario, v: Variant, leases = true): void {
  const f = new Fleet(sc, v, leases ? { onStep: assertLeases } : {});
  const quiet = quietAt(sc);
  f.run(quiet);
  const waiting = f.calls.filter((c) => c.phase === "waiting");
  const by = quiet + livenessBound(sc, waiting.length);
  f.run(by + maxDuration(sc) + 1);
  for (const c of waiting)
    if (c.admittedAt === undefined || c.admittedAt > by)
      throw new Error(
        `${c.id} not admitted by ${by} ms (quiet at ${quiet}, ${waiting.length} waiting): ${c.admittedAt}`,
      );
  for (const c of f.calls)
    if (!f.deadAt.has(c.spec.sidecar) && c.phase !== "done")
      throw new Error(`${c.id} of a live sidecar is ${c.phase}`);
  expect(f.used).toBe(0);
}

/**
 * Property 3's measure: the largest gap of weighted attained service (crewServices' service over
 * the crew's weight) between two crews, at each admission while every crew is backlogged (has a
 * waiting call) continuously from the end of the initial burst; and its bound S · M, M the
 * largest charge of one call over the smallest weight.
 *
 * Why S · M: take crews i and j at an admission at t, i ahead. With fresh views a slot frees at
 * one step and every waiter tries again at once, so a slot is never free while calls wait, and
 * each admission after the burst takes the only free slot: the admitted call is the best-ranked
 * waiter (ahead 0), i.e. of a crew with the least service over weight (one band, none aged:
 * everything happens within agingMs). Let s be i's last admission at or before t. If j waited
 * at s, i's service over weight was at most j's just before s; from s to t, i gained at most
 * the charge of the call admitted at s plus the completion charges of its other calls running
 * then, at most S calls of at most M each, while j's service only grew. Decay scales both by
 * the same factor, which only shrinks the gap. If s fell in the burst (j not waiting yet), no
 * call had ended yet, so at most S calls were admitted and i's whole service is at most S · M.
 */
function unfairness(sc: Scenario, v: Variant): { gap: number; bound: number } {
  const crews = sc.weights.map((_, i) => crewName(i));
  let window: "before" | "open" | "closed" = "before";
  let gap = 0;
  const waitingCrews = (f: Fleet) => new Set(f.calls.filter((c) => c.phase === "waiting").map((c) => c.crew));
  const f = new Fleet(sc, v, {
    onAdmit: (fl, a) => {
      if (fl.now < BURST_END_MS || window === "closed") return;
      if (window === "before") {
        const before = waitingCrews(fl).add(a.call.crew);
        window = crews.every((c) => before.has(c)) ? "open" : "closed";
        if (window === "closed") return;
      }
      const services = crewServices(fl.svc.values(), fl.now, O.halfLifeMs);
      const shares = crews.map((c) => {
        const s = services.get(c);
        return s === undefined ? 0 : s.service / s.weight;
      });
      gap = Math.max(gap, Math.max(...shares) - Math.min(...shares));
      const after = waitingCrews(fl);
      if (!crews.every((c) => after.has(c))) window = "closed";
    },
  });
  f.run(O.agingMs - 1);
  const charge = Math.max(...sc.calls.map((c) => serviceTokens(c.prompt, c.output)));
  return { gap, bound: (sc.slots * charge) / Math.min(...sc.weights) };
}

/**
 * Property 4: at each admission (fresh views, nobody dead), the live waiters of a strictly
 * better band (after aging, as rankOf ages them) are fewer than the slots that were free: a
 * standard or batch call (not aged to interactive) never takes the last free slot while an
 * interactive call waits. And the handoff never fires: every waiter tries again at every slot
 * change, so no free slot stays owed to a waiter that does not come.
 */
function assertStrictPriority(sc: Scenario, v: Variant): void {
  const none = new Map<string, { service: number }>();
  const f = new Fleet(sc, v, {
    onAdmit: (fl, a) => {
      if (a.verdict.admit && a.verdict.handedOff)
        throw new Error(`${a.call.id} admitted by the handoff at ${fl.now}`);
      const mine = rankOf(fairCall(a.call), none, fl.now, O).band;
      const better = [...fl.queue.values()].filter(
        (r) => r.expiresAt > fl.now && rankOf(r, none, fl.now, O).band < mine,
      );
      if (better.length >= a.freeBefore)
        throw new Error(
          `${a.call.id} (${a.call.spec.band}, band ${mine} at ${fl.now}) took one of ${a.freeBefore} free slot(s) ` +
            `while ${better.map((r) => `${r.id} (${r.band})`).join(", ")} waited`,
        );
    },
  });
  f.run(quietAt(sc) + livenessBound(sc, sc.calls.length) + maxDuration(sc) + 1);
}

/** fast-check finds a counterexample (first one: no shrinking). */
function findsCounterexample(
  arb: fc.Arbitrary<Scenario>,
  check: (sc: Scenario) => void,
  numRuns = 300,
): boolean {
  return fc.check(
    fc.property(arb, (sc) => check(sc)),
    { numRuns, endOnFailure: true },
  ).failed;
}

describe("fair admission across sidecars (docs/rules/fairness.md §6–§8), a model", () => {
  it("1. never more calls hold slots than the model has, however stale the views", () => {
    fc.assert(
      fc.property(staleFleetArb, (sc) => assertNoOvercommit(sc, REAL)),
      { numRuns: 200 },
    );
    // It can fail: a claim that trusts its (stale) view instead of a compare-and-set overcommits.
    expect(findsCounterexample(staleFleetArb, (sc) => assertNoOvercommit(sc, { ...REAL, cas: false }))).toBe(
      true,
    );
  });

  it("2. no lost waiter: admitted within the bound once quiet; dead sidecars' records end with their lease", () => {
    fc.assert(
      fc.property(staleFleetArb, (sc) => assertLiveness(sc, REAL)),
      { numRuns: 200 },
    );
    // It can fail: waiters that try again on slot changes only (no replan, no handoff timer)
    // stay behind stale views and dead records.
    expect(
      findsCounterexample(staleFleetArb, (sc) => assertLiveness(sc, { ...REAL, timers: false }, false)),
    ).toBe(true);
  });

  it("3. bounded unfairness between backlogged crews, and unbounded without the gate", () => {
    fc.assert(
      fc.property(backloggedArb, (sc) => {
        const { gap, bound } = unfairness(sc, REAL);
        expect(gap).toBeLessThanOrEqual(bound + 1e-6);
      }),
      { numRuns: 150 },
    );
    // Without the gate the bound does not hold.
    expect(
      findsCounterexample(backloggedArb, (sc) => {
        const { gap, bound } = unfairness(sc, { ...REAL, gate: false });
        expect(gap).toBeLessThanOrEqual(bound + 1e-6);
      }),
    ).toBe(true);
  });

  it("3b. one crew with 8× the sidecars and calls: the gate holds it to its share", () => {
    // crew0 on sidecars 0–7, crew1 on sidecar 8, ten calls per sidecar at the start; weight 1
    // each, 2 slots, every call 1 s and 1000 tokens (400 prompt + 2 × 300 output).
    const calls: CallSpec[] = [];
    for (let sidecar = 0; sidecar < 9; sidecar++)
      for (let i = 0; i < 10; i++)
        calls.push({
          at: (sidecar * 10 + i) % BURST_END_MS,
          sidecar,
          crew: sidecar < 8 ? 0 : 1,
          band: "standard",
          prompt: 400,
          output: 300,
          durationMs: 1000,
        });
    let seed = 7;
    const order = Array.from({ length: 97 }, () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed;
    });
    const sc: Scenario = { slots: 2, sidecars: 9, weights: [1, 1], calls, order, ...FRESH };
    const fair = unfairness(sc, REAL);
    const unfair = unfairness(sc, { ...REAL, gate: false });
    expect(fair.bound).toBe(2000);
    expect(fair.gap).toBeLessThanOrEqual(fair.bound);
    expect(unfair.gap).toBeGreaterThan(5 * fair.bound);
  });

  it("4. strict priority between bands with fresh views, and no handoff", () => {
    fc.assert(
      fc.property(freshFleetArb, (sc) => assertStrictPriority(sc, REAL)),
      { numRuns: 200 },
    );
    // It can fail: without the gate a lower band takes the last slot before an interactive waiter.
    expect(
      findsCounterexample(freshFleetArb, (sc) => assertStrictPriority(sc, { ...REAL, gate: false })),
    ).toBe(true);
  });
});
