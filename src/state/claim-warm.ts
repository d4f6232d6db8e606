// The warm path of a claim (docs/rules/state.md §7): a claim without victims whose model the
// provider has resident writes its ticket without the guard, then confirms it (claim-confirm.ts).
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { residentModels, type Ticket } from "../core/index.js";
import { warmStillFits } from "./claim-confirm.js";
import { type FreshCopies, notFreshTogether } from "./claim-fresh.js";
import { guardStateRevision } from "./claim-guard.js";
import type { ClaimEngineOptions, ClaimResult, ClaimStats } from "./claim-types.js";
import { encodeJson } from "./kv.js";
import type { OwnTickets } from "./own-tickets.js";
import { ticketJson } from "./ticket-codec.js";
import { providerResidencies, providerTickets } from "./tickets-view.js";

/** What the warm path uses of its claim engine. */
export interface WarmContext {
  readonly o: ClaimEngineOptions;
  readonly mine: OwnTickets;
  readonly refreshWaitMs: number;
  readonly fresh: FreshCopies;
}

/**
 * The warm path: a claim without victims whose model the provider has resident (published
 * or overlay) takes no room, so it needs no decision on the guard: its ticket is written
 * directly (revision 0: never written), one round trip. Undefined when the claim is not warm
 * by a fresh read (cold, converging on a load in flight, unknown provider): it then goes
 * through the guard.
 */
export async function writeWarmTicket(
  c: WarmContext,
  ticket: Ticket,
  leaseMs: number,
  slots?: number,
): Promise<ClaimResult | undefined> {
  const { providers } = c.o;
  const mirror = c.o.copies.of(ticket.provider);
  for (let round = 0; ; round++) {
    await c.fresh.refresh(ticket.provider, Number.NEGATIVE_INFINITY);
    // A decision on this provider read a newer state than ours (the model may be gone by
    // it): catch up before judging the model resident, or leave it to the guard.
    const newer = guardStateRevision(c.o.keys, mirror, ticket.provider);
    if (newer > providers.revisionOf(ticket.provider)) {
      if (!(await providers.waitForRevision(ticket.provider, newer, c.refreshWaitMs))) return undefined;
      continue;
    }
    // The decision below is synchronous: the age measured here is the age it decides on.
    if (c.fresh.freshEnough(ticket.provider)) break;
    if (round >= 20) throw notFreshTogether();
  }
  const confirmedAt = Math.min(mirror.confirmedAt, providers.confirmedAt(ticket.provider));
  const stats: ClaimStats = {
    attempts: 1,
    conflicts: 0,
    revision: mirror.revision,
    viewAgeMs: performance.now() - confirmedAt,
    confirmedAt,
  };
  const state = providers.peek(ticket.provider);
  if (state === undefined) return undefined;
  if (!residentModels(state, providerResidencies(mirror, ticket.provider)).has(ticket.modelName)) {
    return undefined;
  }
  // While the provider's state is changing, other processes may still decide on the one
  // before: a warm claim then goes through the guard, serialized with their decisions.
  const changed = providers.lastChangeSeen(ticket.provider);
  if (changed !== undefined && performance.now() - changed < c.o.freshnessMs * 2) return undefined;
  const now = c.o.now();
  if (slots !== undefined && slots > 0) {
    // Counted in the same synchronous run as the grant below: concurrent warm claims of this
    // process see each other.
    let held = 0;
    for (const t of providerTickets(mirror, ticket.provider, now)) {
      if (t.modelName === ticket.modelName && c.mine.holdsSlot(t)) held++;
    }
    for (const t of c.mine.unseen(ticket.provider)) if (t.modelName === ticket.modelName) held++;
    if (held >= slots) return { ok: false, reason: "no-slot", stats };
  }
  ticket.claimedAt = new Date(now).toISOString();
  ticket.expiresAt = now + leaseMs;
  ticket.coldLoad = false;
  const key = c.o.keys.ticket(ticket);
  c.mine.grant(key, ticket);
  let written: number;
  try {
    written = await c.o.tickets.update(key, encodeJson(ticketJson(ticket)), 0);
  } catch (err) {
    c.mine.revoke(key);
    // Unknown outcome: a tombstone keeps a late write from ever landing (it takes no room
    // either way, and its lease ends it).
    c.o.tickets.delete(key).catch(() => undefined);
    throw err;
  }
  if (await warmConfirmed(c, ticket, written, slots))
    return { ok: true, ticket, key, coldLoad: false, stats };
  // A decision it had not seen, or a ticket written just before it, leaves no room for it:
  // withdraw and let the guard decide (under a new id: the old key holds a tombstone).
  c.mine.revoke(key);
  await c.o.tickets.delete(key);
  c.o.onWithdraw?.();
  ticket.ticketId = randomUUID();
  return undefined;
}

/** Judges a written warm ticket again once the copy holds its write (claim-confirm.ts). */
async function warmConfirmed(
  c: WarmContext,
  ticket: Ticket,
  written: number,
  slots: number | undefined,
): Promise<boolean> {
  const { providers } = c.o;
  const mirror = c.o.copies.of(ticket.provider);
  if (!(await mirror.waitForRevision(written, c.refreshWaitMs))) return false;
  return warmStillFits({
    keys: c.o.keys,
    mirror,
    state: providers.peek(ticket.provider),
    ticket,
    liveNowMs: c.o.now() - c.o.leaseGraceMs,
    slots,
    holdsSlot: (t) => c.mine.holdsSlot(t),
  });
}
