import { describe, expect, it } from "vitest";
import { ticket as fixtureTicket, T0 } from "../../test/helpers/core-fixtures.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { claimVerdict } from "./claim-verdict.js";
import type { Ticket } from "./shapes.js";

const NOW = T0;
const ALPHA = providerState("card", {
  totalVramMiB: 16384,
  loadedModelFootprintsMiB: { alpha: 9000 },
  lastProbedAt: "",
});

/** A live 9000 MiB ticket on "card". */
function ticket(model: string, over: Partial<Ticket> = {}): Ticket {
  return fixtureTicket("card", model, { ticketId: `${model}-1`, modelFootprintMiB: 9000, ...over });
}

describe("deciding one claim", () => {
  it("refuses a resident model that a load in flight plans to unload, as a victim with work is refused", () => {
    const load = ticket("beta", { evicts: { alpha: 9000 }, coldLoad: true });
    const view = { state: ALPHA, tickets: [load], residencies: [] };
    expect(claimVerdict(view, ticket("alpha"), NOW)).toEqual({ ok: false, reason: "no-room" });
    // The mirror image: the load is refused while the resident model has work.
    expect(claimVerdict({ state: ALPHA, tickets: [ticket("alpha")], residencies: [] }, load, NOW)).toEqual({
      ok: false,
      reason: "victim-busy",
      victim: "alpha",
    });
    // Once the unloading ticket's lease has passed, it plans nothing.
    const ended = { ...view, tickets: [{ ...load, expiresAt: NOW - 1 }] };
    expect(claimVerdict(ended, ticket("alpha"), NOW)).toEqual({ ok: true, coldLoad: false });
  });

  // Found by the interleaving property (CI, seed 1318083151): a decision converged on a load
  // whose plan was doomed (its victim had a warm ticket); the plan withdrew, and the
  // converging load stayed beside the victim, 18000 MiB on 14336 usable.
  it("counts no credit from a plan whose victim has work: one of the two will withdraw", () => {
    const card = providerState("card", {
      totalVramMiB: 16384,
      loadedModelFootprintsMiB: { idle: 6000 },
      lastProbedAt: "",
    });
    const warmIdle = ticket("idle", { ticketId: "idle-warm", modelFootprintMiB: 6000, coldLoad: false });
    const doomed = ticket("big", { ticketId: "big-plan", modelFootprintMiB: 12000, evicts: { idle: 6000 } });
    const view = { state: card, tickets: [warmIdle, doomed], residencies: [] };
    const converging = ticket("big", { ticketId: "big-2", modelFootprintMiB: 12000 });
    expect(claimVerdict(view, converging, NOW)).toEqual({ ok: false, reason: "no-room" });
    // Without the warm ticket the plan stands, and a second call converges on its load.
    expect(claimVerdict({ ...view, tickets: [doomed] }, converging, NOW)).toEqual({
      ok: true,
      coldLoad: true,
    });
  });

  it("refuses to converge on a load when the loads in view already exceed the room", () => {
    const empty = providerState("card", { totalVramMiB: 16384, lastProbedAt: "" });
    // A warm ticket claimed on a stale belief is a load too: 12000 + 6000 > 14336 usable.
    const load = ticket("big", { ticketId: "big-1", modelFootprintMiB: 12000, coldLoad: true });
    const stale = ticket("idle", { ticketId: "idle-stale", modelFootprintMiB: 6000, coldLoad: false });
    const converging = ticket("big", { ticketId: "big-2", modelFootprintMiB: 12000 });
    const view = { state: empty, tickets: [load, stale], residencies: [] };
    expect(claimVerdict(view, converging, NOW)).toEqual({ ok: false, reason: "no-room" });
    expect(claimVerdict({ ...view, tickets: [load] }, converging, NOW)).toEqual({ ok: true, coldLoad: true });
    // A bigger footprint for the same model counts at its own size.
    const bigger = ticket("big", { ticketId: "big-3", modelFootprintMiB: 15000 });
    expect(claimVerdict({ ...view, tickets: [load] }, bigger, NOW)).toEqual({ ok: false, reason: "no-room" });
  });
});
