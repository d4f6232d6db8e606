import { describe, expect, it } from "vitest";
import { ticket as fixtureTicket, T0 } from "../../test/helpers/core-fixtures.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import type { Ticket } from "../core/shapes.js";
import { decideClaim } from "./claim-decision.js";

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
    expect(decideClaim(view, ticket("alpha"), NOW)).toEqual({ ok: false, reason: "no-room" });
    // The mirror image: the load is refused while the resident model has work.
    expect(decideClaim({ state: ALPHA, tickets: [ticket("alpha")], residencies: [] }, load, NOW)).toEqual({
      ok: false,
      reason: "victim-busy",
      victim: "alpha",
    });
    // Once the unloading ticket's lease has passed, it plans nothing.
    const ended = { ...view, tickets: [{ ...load, expiresAt: NOW - 1 }] };
    expect(decideClaim(ended, ticket("alpha"), NOW)).toEqual({ ok: true, coldLoad: false });
  });
});
