// Ticket, residency and guard values of kubemoot_provider_tickets. Tickets and residencies are
// written with Kubemoot's field names in Kubemoot's order (plus our `expiresAt` lease and
// `coldLoad`), and read tolerantly: Kubemoot's own tickets lack both and are honoured.
import type { Residency, Ticket } from "../core/index.js";
import { instantMs, isObject, num, numberMap, str } from "./json-fields.js";

/** Ticket JSON in Kubemoot's field order. */
export function ticketJson(t: Ticket): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ticketId: t.ticketId,
    provider: t.provider,
    modelFootprintMiB: t.modelFootprintMiB,
    kvCacheFootprintMiB: t.kvCacheFootprintMiB,
    holderId: t.holderId,
    claimedAt: t.claimedAt,
    modelName: t.modelName,
    evicts: t.evicts,
  };
  if (t.expiresAt !== undefined) out.expiresAt = t.expiresAt;
  if (t.coldLoad !== undefined) out.coldLoad = t.coldLoad;
  return out;
}

/**
 * Reads a ticket value. `expected` comes from the key: a value naming another provider or
 * ticket is not trusted. Returns undefined (skip) when the value is not a ticket object.
 */
export function parseTicket(
  raw: unknown,
  expected: { provider: string; ticketId: string },
): Ticket | undefined {
  if (!isObject(raw)) return undefined;
  const provider = str(raw.provider) || expected.provider;
  const ticketId = str(raw.ticketId) || expected.ticketId;
  if (provider !== expected.provider || ticketId !== expected.ticketId) return undefined;
  const t: Ticket = {
    ticketId,
    provider,
    modelFootprintMiB: num(raw.modelFootprintMiB),
    kvCacheFootprintMiB: num(raw.kvCacheFootprintMiB),
    holderId: str(raw.holderId),
    claimedAt: str(raw.claimedAt),
    modelName: str(raw.modelName),
    evicts: numberMap(raw.evicts),
  };
  const expiresAt = instantMs(raw.expiresAt);
  if (expiresAt !== undefined) t.expiresAt = expiresAt;
  if (typeof raw.coldLoad === "boolean") t.coldLoad = raw.coldLoad;
  return t;
}

export function residencyJson(r: Residency): Record<string, unknown> {
  return {
    provider: r.provider,
    modelName: r.modelName,
    modelFootprintMiB: r.modelFootprintMiB,
    ...(r.writtenAt !== undefined ? { writtenAt: r.writtenAt } : {}),
    ...(r.loadMs !== undefined && r.loadMs > 0 ? { loadMs: r.loadMs } : {}),
  };
}

/** Reads a residency overlay; undefined (skip) without a model name. */
export function parseResidency(raw: unknown, expectedProvider: string): Residency | undefined {
  if (!isObject(raw)) return undefined;
  const provider = str(raw.provider) || expectedProvider;
  const modelName = str(raw.modelName);
  if (provider !== expectedProvider || modelName === "") return undefined;
  const writtenAt = num(raw.writtenAt);
  const loadMs = num(raw.loadMs);
  return {
    provider,
    modelName,
    modelFootprintMiB: num(raw.modelFootprintMiB),
    ...(writtenAt > 0 ? { writtenAt } : {}),
    ...(loadMs > 0 ? { loadMs } : {}),
  };
}

/** Value of `_suspect__<provider>`: when (epoch ms) and by whom it was found unreachable. */
export interface SuspectValue {
  provider: string;
  sinceMs: number;
  by: string;
}

export function suspectJson(s: SuspectValue): Record<string, unknown> {
  return { provider: s.provider, since: s.sinceMs, by: s.by };
}

/** Reads a suspect mark; undefined (skip) without a time. */
export function parseSuspect(raw: unknown, provider: string): SuspectValue | undefined {
  if (!isObject(raw)) return undefined;
  const sinceMs = num(raw.since);
  if (!(sinceMs > 0)) return undefined;
  return { provider, sinceMs, by: str(raw.by) };
}

/**
 * Value of the guard key `_claim__<provider>`: the tickets of the last claim decision on the
 * provider, which their holder may not have written yet (see claim.ts).
 */
export interface GuardValue {
  pending: Ticket[];
  /**
   * The revision of the provider's state the decision read (0 = unknown): a later claim that
   * holds an older state catches up before it decides (docs/rules/state.md §6).
   */
  stateRevision: number;
}

export function guardJson(g: GuardValue): Record<string, unknown> {
  return {
    v: 1,
    pending: g.pending.map(ticketJson),
    ...(g.stateRevision > 0 ? { stateRev: g.stateRevision } : {}),
  };
}

export function parseGuard(raw: unknown, provider: string): GuardValue {
  const pending: Ticket[] = [];
  if (isObject(raw) && Array.isArray(raw.pending)) {
    for (const p of raw.pending) {
      const t = isObject(p) ? parseTicket(p, { provider, ticketId: str(p.ticketId) }) : undefined;
      if (t !== undefined && t.ticketId !== "") pending.push(t);
    }
  }
  const stateRevision = isObject(raw) ? num(raw.stateRev) : 0;
  return { pending, stateRevision };
}
