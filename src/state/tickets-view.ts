// The tickets bucket as the mirror holds it: each key decoded once per revision into a ticket,
// a residency overlay or a claim guard; foreign and malformed keys are skipped.
import { type ConversationSeen, type Residency, type Ticket, ticketLive } from "../core/index.js";
import type { Logger } from "../log/index.js";
import { parseConversation } from "./conversation-codec.js";
import { decodeJson, type KvEntry } from "./kv.js";
import type { BucketMirror } from "./mirror.js";
import {
  type GuardValue,
  parseGuard,
  parseResidency,
  parseSuspect,
  parseTicket,
  type SuspectValue,
} from "./ticket-codec.js";
import type { KeyLayout } from "./ticket-keys.js";

export type TicketsValue =
  | { kind: "ticket"; ticket: Ticket }
  | { kind: "residency"; residency: Residency }
  | { kind: "guard"; guard: GuardValue }
  | { kind: "suspect"; suspect: SuspectValue }
  | { kind: "conversation"; conversation: ConversationSeen };

export type TicketsMirror = BucketMirror<TicketsValue>;

/**
 * The copies' index groups the keys by provider, and a provider's conversation records apart
 * under this prefix: a claim's scans of a provider's keys never walk them.
 */
export const CONVERSATION_GROUP = "\u0000conversations\u0000";

export function ticketsGroup(keys: KeyLayout, key: string): string | undefined {
  const k = keys.parse(key);
  if (k.kind === "foreign") return undefined;
  return k.kind === "conversation" ? `${CONVERSATION_GROUP}${k.provider}` : k.provider;
}

export function ticketsDecoder(keys: KeyLayout, logger: Logger): (e: KvEntry) => TicketsValue | undefined {
  return (e) => {
    const k = keys.parse(e.key);
    if (k.kind === "foreign") {
      logger.debug({ key: e.key }, "state: skipping a foreign key in the tickets bucket");
      return undefined;
    }
    let raw: unknown;
    try {
      raw = decodeJson(e.value);
    } catch (err) {
      logger.warn({ key: e.key, revision: e.revision, err }, "state: skipping an unreadable tickets entry");
      return undefined;
    }
    let out: TicketsValue | undefined;
    if (k.kind === "ticket") {
      const ticket = parseTicket(raw, k);
      if (ticket !== undefined) out = { kind: "ticket", ticket };
    } else if (k.kind === "residency") {
      const residency = parseResidency(raw, k.provider);
      if (residency !== undefined) out = { kind: "residency", residency };
    } else if (k.kind === "suspect") {
      const suspect = parseSuspect(raw, k.provider);
      if (suspect !== undefined) out = { kind: "suspect", suspect };
    } else if (k.kind === "conversation") {
      const conversation = parseConversation(raw, k.provider, k.key);
      if (conversation !== undefined) out = { kind: "conversation", conversation };
    } else {
      out = { kind: "guard", guard: parseGuard(raw, k.provider) };
    }
    if (out === undefined) {
      logger.warn({ key: e.key, revision: e.revision }, "state: skipping a malformed tickets entry");
    }
    return out;
  };
}

/**
 * Whether the copy must keep a key's tombstone for the bucket's TTL (docs/rules/state.md §10):
 * every key but a ticket's, and a ticket its provider's current guard lists as pending. A guard
 * is committed before its tickets are written, so the copy holds it by the time their deletes
 * arrive; a later guard lists only tickets of its own decision.
 */
export function tombstoneNeeded(keys: KeyLayout, mirror: TicketsMirror, key: string): boolean {
  const k = keys.parse(key);
  if (k.kind !== "ticket") return true;
  const v = mirror.get(keys.guard(k.provider))?.value;
  return v?.kind === "guard" && v.guard.pending.some((t) => t.ticketId === k.ticketId);
}

/** Tickets of one provider (exact `<provider>__` keys) live at `liveNowMs`. */
export function providerTickets(mirror: TicketsMirror, provider: string, liveNowMs: number): Ticket[] {
  const out: Ticket[] = [];
  for (const e of mirror.group(provider)) {
    const v = e.value;
    if (v?.kind === "ticket" && ticketLive(v.ticket, liveNowMs)) out.push(v.ticket);
  }
  return out;
}

/** Residency overlays of one provider. */
export function providerResidencies(mirror: TicketsMirror, provider: string): Residency[] {
  const out: Residency[] = [];
  for (const e of mirror.group(provider)) {
    const v = e.value;
    if (v?.kind === "residency") out.push(v.residency);
  }
  return out;
}
