// The verdict on one claim (docs/rules/state.md §5): does one more ticket fit the provider's
// budget as the claim sees it? The budget rule itself is claimFits (./vram.ts); this adds the
// eviction rule: a plan is refused when one of its victims picked up work. Pure, so the state
// layer's claim protocol and the simulation's store judge claims by the very same rule.
import { isFixedModelEngine } from "./engines.js";
import type { ProviderState, Residency, Ticket } from "./shapes.js";
import { budgetView, claimFits, residentModels, ticketLive } from "./vram.js";

/** What a claim decides on: one provider's state and its live tickets and residencies. */
export interface ClaimView {
  state: ProviderState;
  tickets: readonly Ticket[];
  residencies: readonly Residency[];
}

export type ClaimVerdict =
  | { ok: true; coldLoad: boolean }
  | { ok: false; reason: "no-room" | "victim-busy"; victim?: string };

/**
 * Judges one claim. `liveNowMs` is the instant leases are judged at (the store subtracts its
 * lease grace from the clock). A claim whose model is resident is warm: it always fits.
 */
export function claimVerdict(
  view: ClaimView,
  claim: Pick<Ticket, "modelName" | "modelFootprintMiB" | "evicts">,
  liveNowMs: number,
): ClaimVerdict {
  for (const victim of Object.keys(claim.evicts ?? {})) {
    const busy = view.tickets.some((t) => t.modelName === victim && ticketLive(t, liveNowMs));
    if (busy) return { ok: false, reason: "victim-busy", victim };
  }
  // A fixed-model engine's VRAM is its own (preallocated): a ticket there takes a slot, never
  // room, and it can only serve what it was started with (docs/rules/engines.md "Placement").
  if (isFixedModelEngine(view.state.engine)) {
    return (view.state.loadedModels ?? []).includes(claim.modelName)
      ? { ok: true, coldLoad: false }
      : { ok: false, reason: "no-room" };
  }
  if (!claimFits(view.state, view.tickets, view.residencies, claim, liveNowMs)) {
    return { ok: false, reason: "no-room" };
  }
  // A model resident by this view beside loads that do not fit with it: one of the two views
  // is stale (the model was unloaded for them, or they were granted on an older state). The
  // claim would put both on the card, so it waits for the loads to end.
  const resident = residentModels(view.state, view.residencies);
  if (resident.has(claim.modelName)) {
    // A load in flight plans to unload this model: the mirror image of victim-busy. Whichever
    // of the two comes later is refused, so the unload never meets a call on its victim.
    const planned = view.tickets.some(
      (t) => ticketLive(t, liveNowMs) && Object.hasOwn(t.evicts ?? {}, claim.modelName),
    );
    if (planned) return { ok: false, reason: "no-room" };
    const b = budgetView(view.state, view.tickets, view.residencies, liveNowMs);
    if (b.inFlight > 0 && b.resident + b.inFlight > b.usable + b.credit)
      return { ok: false, reason: "no-room" };
  }
  const coldLoad = !residentModels(view.state, view.residencies).has(claim.modelName);
  return { ok: true, coldLoad };
}
