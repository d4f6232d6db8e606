// Confirming a claim after its write (docs/rules/state.md §7, "Confirm after writing"). A warm
// ticket is written without the guard, so a guard decision made at the same moment on another
// copy may not have counted it, and the warm claim may not have seen that decision. Both are
// writes to the one tickets stream, so they are ordered: once a claimer's copy reaches its own
// write it shows every write before it. Each side then judges itself again against what it had
// not counted; of two claims that do not fit together, the later one always sees the earlier
// and withdraws (both may withdraw, never neither).

import { claimVerdict, type ProviderState, type Residency, type Ticket, ticketLive } from "../core/index.js";
import { guardFromMirror, unseenPending } from "./claim-guard.js";
import type { KeyLayout } from "./ticket-keys.js";
import { providerResidencies, type TicketsMirror } from "./tickets-view.js";

/** Live tickets of a provider written before revision `before`, except `exclude`. */
function ticketsBefore(
  mirror: TicketsMirror,
  provider: string,
  before: number,
  liveNowMs: number,
  exclude: ReadonlySet<string>,
): Ticket[] {
  const out: Ticket[] = [];
  for (const e of mirror.group(provider)) {
    const v = e.value;
    if (e.revision >= before || v?.kind !== "ticket") continue;
    if (exclude.has(v.ticket.ticketId) || !ticketLive(v.ticket, liveNowMs)) continue;
    out.push(v.ticket);
  }
  return out;
}

export interface WarmCheck {
  keys: KeyLayout;
  mirror: TicketsMirror;
  state: ProviderState | undefined;
  ticket: Ticket;
  liveNowMs: number;
  /** The engine's parallel slots for the model, when the claim needs a free one. */
  slots: number | undefined;
  /** Whether a ticket still holds its slot (this process may have released it already). */
  holdsSlot: (t: Ticket) => boolean;
}

/**
 * Whether a warm ticket, judged against every ticket and decision written before it (the copy
 * must hold its write), still fits: its model resident beside the loads in flight,
 * and a slot free. Tickets and the last decision that came after the write count too
 * (conservative: of two claims that do not fit together, both may withdraw, never neither).
 */
export function warmStillFits(c: WarmCheck): boolean {
  const { mirror, state, ticket } = c;
  if (state === undefined) return false;
  const provider = ticket.provider;
  // Every live ticket the copy holds, not only those written before this one: a decision
  // whose guard came before this write may write its tickets after it, and once the copy has
  // seen them they are no longer pending in any guard (a later decision may even have replaced
  // that guard). Counting later tickets too can only make this claim withdraw more often.
  const view = ticketsBefore(
    mirror,
    provider,
    Number.POSITIVE_INFINITY,
    c.liveNowMs,
    new Set([ticket.ticketId]),
  );
  const { keys } = c;
  view.push(...unseenPending(keys, mirror, provider, guardFromMirror(keys, mirror, provider), c.liveNowMs));
  // A load that plans to unload this model: the copy is on its way out.
  if (view.some((t) => Object.hasOwn(t.evicts ?? {}, ticket.modelName))) return false;
  const residencies: Residency[] = providerResidencies(mirror, provider);
  const d = claimVerdict({ state, tickets: view, residencies }, ticket, c.liveNowMs);
  if (!d.ok || d.coldLoad) return false;
  if (c.slots !== undefined && c.slots > 0) {
    let held = 0;
    for (const t of view) if (t.modelName === ticket.modelName && c.holdsSlot(t)) held++;
    if (held >= c.slots) return false;
  }
  return true;
}

export interface DecisionCheck {
  mirror: TicketsMirror;
  state: ProviderState | undefined;
  provider: string;
  /** Revision of the decision's guard; the copy holds it. */
  committed: number;
  /** Ids of the tickets the decision counted. */
  counted: ReadonlySet<string>;
  /** The view it decided on, before its own grants. */
  base: readonly Ticket[];
  liveNowMs: number;
  /** The parallel slots a granted ticket's claim asked for, by ticket id (none: no slot check). */
  slots?: ReadonlyMap<string, number>;
  /** Whether a ticket still holds its slot (this process may have released it already). */
  holdsSlot?: (t: Ticket) => boolean;
}

/**
 * For each ticket a committed decision granted (in decision order): whether it still fits once
 * the tickets written before the decision's guard that it did not count (warm ones, written
 * without the guard) join its view, room and slots alike. Without a check (the copy could not
 * reach the guard), none is confirmed.
 */
export function decisionStillFits(c: DecisionCheck | undefined, granted: readonly Ticket[]): boolean[] {
  if (c === undefined || c.state === undefined) return granted.map(() => false);
  const missed = ticketsBefore(c.mirror, c.provider, c.committed, c.liveNowMs, c.counted);
  if (missed.length === 0) return granted.map(() => true);
  const view = [...c.base, ...missed];
  const residencies = providerResidencies(c.mirror, c.provider);
  return granted.map((t) => {
    const ok =
      claimVerdict({ state: c.state!, tickets: view, residencies }, t, c.liveNowMs).ok &&
      slotFree(c, view, t);
    if (ok) view.push(t);
    return ok;
  });
}

/** Whether `t`'s claim, if it asked for slots, finds one free beside `view`. */
function slotFree(c: DecisionCheck, view: readonly Ticket[], t: Ticket): boolean {
  const slots = c.slots?.get(t.ticketId);
  if (slots === undefined || !(slots > 0)) return true;
  let held = 0;
  for (const x of view) {
    if (x.modelName === t.modelName && x.ticketId !== t.ticketId && (c.holdsSlot?.(x) ?? true)) held++;
  }
  return held < slots;
}
