import { describe, expect, it } from "vitest";
import { provider, snapshot, T0, ticket } from "../../test/helpers/core-fixtures.js";
import { parseBand } from "./bands.js";
import { aggregateDemand } from "./demand.js";
import {
  capBand,
  crewServices,
  DEFAULT_FAIR_SHARE,
  type FairCall,
  fairGate,
  freeSlotsFor,
  jainIndex,
  rankOf,
  serviceTokens,
} from "./fair-share.js";
import { decide } from "./planner.js";
import type { QueueEntry, ServiceEntry, UseEntry } from "./shapes.js";
import { indexSnapshot } from "./snapshot.js";

const O = DEFAULT_FAIR_SHARE;
const svc = (crew: string, service: number, over: Partial<ServiceEntry> = {}): ServiceEntry => ({
  kind: "svc",
  crew,
  weight: 1,
  service,
  updatedAt: T0,
  expiresAt: T0 + 600_000,
  ...over,
});
const waiter = (id: string, crew: string, over: Partial<QueueEntry> = {}): QueueEntry => ({
  kind: "queue",
  id,
  model: "m",
  crew,
  band: "standard",
  weight: 1,
  since: T0 - 1000,
  expiresAt: T0 + 15_000,
  ...over,
});
const call = (crew: string, over: Partial<FairCall> = {}): FairCall => ({
  id: "me",
  crew,
  band: "standard",
  weight: 1,
  since: T0,
  ...over,
});
const gate = (
  c: FairCall,
  waiters: QueueEntry[],
  services: ServiceEntry[],
  freeSlots: number,
  since?: number,
) =>
  fairGate({
    call: c,
    waiters,
    services: crewServices(services, T0, O.halfLifeMs),
    freeSlots,
    deferredWhileFreeSinceMs: since,
    nowMs: T0,
    options: O,
  });

describe("fair share: bands and service (docs/rules/fairness.md §2, §4)", () => {
  it("reads bands by name and caps them at the crew's allowance", () => {
    expect(parseBand(" Interactive ")).toBe("interactive");
    expect(parseBand("urgent")).toBeUndefined();
    expect(capBand("interactive", "standard")).toBe("standard");
    expect(capBand("batch", "standard")).toBe("batch");
  });
  it("charges prompt plus twice the output, and decays by the half-life", () => {
    expect(serviceTokens(100, 10)).toBe(120);
    const m = crewServices(
      [svc("a", 400), svc("a", 400, { updatedAt: T0 - 60_000 }), svc("b", 50)],
      T0,
      60_000,
    );
    expect(m.get("a")?.service).toBeCloseTo(600);
    expect(m.get("b")?.service).toBe(50);
  });
  it("skips expired service entries", () => {
    expect(crewServices([svc("a", 400, { expiresAt: T0 })], T0, 60_000).size).toBe(0);
  });
  it("Jain's index: 1 when equal, 1/n when one crew takes all", () => {
    expect(jainIndex([3, 3, 3])).toBe(1);
    expect(jainIndex([9, 0, 0])).toBeCloseTo(1 / 3);
    expect(jainIndex([8, 1])).toBeCloseTo(81 / 130);
  });
});

describe("fair share: the gate (§3)", () => {
  it("admits at once when nobody waits", () => {
    expect(gate(call("a"), [], [], 1)).toEqual({ admit: true, ahead: 0, handedOff: false });
  });
  it("leaves the last free slot to a waiter of a crew with less service over its weight", () => {
    const services = [svc("a", 1000), svc("b", 100)];
    expect(gate(call("a"), [waiter("w", "b")], services, 1)).toEqual({ admit: false, ahead: 1 });
    // With two free slots, both go.
    expect(gate(call("a"), [waiter("w", "b")], services, 2).admit).toBe(true);
    // Weighted: b's weight 1, a's weight 20 → a's normalised service 50 < 100.
    expect(gate(call("a", { weight: 20 }), [waiter("w", "b")], services, 1).admit).toBe(true);
  });
  it("strict priority between bands, whatever the service", () => {
    const services = [svc("a", 0), svc("b", 1e6)];
    const urgent = waiter("w", "b", { band: "interactive" });
    expect(gate(call("a"), [urgent], services, 1).admit).toBe(false);
    expect(gate(call("a", { band: "interactive", since: T0 - 5000 }), [urgent], services, 1).admit).toBe(
      true,
    );
  });
  it("a waiter rises one band per aging period, so batch is not starved", () => {
    const services = [svc("a", 0), svc("b", 0)];
    const oldBatch = waiter("w", "b", { band: "batch", since: T0 - 2 * O.agingMs - 1 });
    expect(rankOf(oldBatch, new Map(), T0, O).band).toBe(0);
    expect(gate(call("a", { band: "interactive" }), [oldBatch], services, 1).admit).toBe(false);
  });
  it("aging lifts a waiter over lower bands only: within its own band, service still orders", () => {
    // crew b's standard waiter has waited past an aging period; crew a's arrives now with less
    // service. Same band: a goes first; aging must not turn b's age into priority over a.
    const services = [svc("a", 100), svc("b", 5000)];
    const oldB = waiter("w", "b", { since: T0 - O.agingMs - 1 });
    expect(gate(call("a"), [oldB], services, 1).admit).toBe(true);
    // Against a batch call, the same aged waiter still counts as a band above.
    expect(
      gate(call("a", { band: "batch" }), [waiter("w2", "b", { since: T0 - 1 })], services, 1).admit,
    ).toBe(false);
  });
  it("FIFO within a crew; its own record and expired records never count", () => {
    const mine = waiter("me", "a", { since: T0 - 5000 });
    const older = waiter("w1", "a", { since: T0 - 9000 });
    const expired = waiter("w2", "a", { since: T0 - 9999, expiresAt: T0 });
    expect(gate(call("a", { since: T0 - 5000 }), [mine, older, expired], [], 1)).toEqual({
      admit: false,
      ahead: 1,
    });
  });
  it("hands a free slot over once it stayed free past the handoff time", () => {
    const w = [waiter("w", "b")];
    const s = [svc("a", 1000)];
    expect(gate(call("a"), w, s, 1, T0 - O.handoffMs + 1).admit).toBe(false);
    expect(gate(call("a"), w, s, 1, T0 - O.handoffMs)).toEqual({ admit: true, ahead: 1, handedOff: true });
    // No slot free: nothing to hand over.
    expect(gate(call("a"), w, s, 0, T0 - 10_000).admit).toBe(false);
  });
});

describe("fair share: free slots of a model (§3)", () => {
  const snap = snapshot({
    providers: [
      provider("g1", { maxParallel: 2, totalVramMiB: 40_000, loadedModelFootprintsMiB: { m: 5000 } }),
      provider("g2", { maxParallel: 4, totalVramMiB: 40_000, loadedModelFootprintsMiB: { m: 5000 } }),
      provider("g3", { maxParallel: 3, totalVramMiB: 40_000, loadedModelFootprintsMiB: {} }),
    ],
    tickets: [ticket("g1", "m"), ticket("g1", "m"), ticket("g2", "m")],
  });
  const ix = indexSnapshot(snap);
  it("counts every warm copy's free slots", () => {
    expect(freeSlotsFor(ix, { provider: "g2", model: "m" })).toBe(3);
  });
  it("adds the slots of a copy the claim starts", () => {
    expect(freeSlotsFor(ix, { provider: "g3", model: "m" })).toBe(6);
  });
});

describe("fair share: evictions across bands (§5)", () => {
  // One card holding an idle "vip" that the interactive band used a minute ago; a call for
  // "bulk" fits only by unloading it.
  const use = (bands: UseEntry["bands"]): UseEntry => ({
    kind: "use",
    model: "vip",
    agent: "support/a",
    rate: 1,
    updatedAt: T0 - 60_000,
    lastUsedAt: T0 - 60_000,
    expiresAt: T0 + 3_600_000,
    ...(bands ? { bands } : {}),
  });
  const snap = (bands: UseEntry["bands"]) =>
    snapshot({
      providers: [
        provider("g", {
          maxParallel: 1,
          totalVramMiB: 24_000,
          loadedModelFootprintsMiB: { vip: 20_000 },
          availableModelFootprintsMiB: { vip: 20_000, bulk: 10_000 },
        }),
      ],
      demand: aggregateDemand([use(bands)], T0),
    });
  const bulk = { candidates: [{ model: "bulk", score: 50 }] };
  it("a batch call never unloads a model the interactive band used lately; an interactive call may", () => {
    const held = snap({ interactive: T0 - 60_000 });
    expect(decide(held, { ...bulk, band: "batch" })).toMatchObject({ kind: "wait-for-memory" });
    expect(decide(held, { ...bulk, band: "interactive" })).toMatchObject({
      kind: "claim",
      evicts: { vip: 20_000 },
    });
  });
  it("after BAND_HOLD_MS, or used by its own band, the model is a victim like any other", () => {
    expect(decide(snap({ interactive: T0 - 6 * 60_000 }), { ...bulk, band: "batch" })).toMatchObject({
      kind: "claim",
      evicts: { vip: 20_000 },
    });
    expect(decide(snap({ batch: T0 - 1000 }), { ...bulk, band: "batch" })).toMatchObject({ kind: "claim" });
  });
});
