// The guard key of a provider as the claim engine reads and writes it (docs/rules/state.md
// §6): the last decision's revision and pending tickets, taken from the watched copy or read
// back from the bucket, and the value of a new decision, kept under the bucket's value limit.
import type { Ticket } from "../core/index.js";
import { decodeJson, encodeJson, type KvBucket } from "./kv.js";
import { guardJson, parseGuard } from "./ticket-codec.js";
import type { KeyLayout } from "./ticket-keys.js";
import type { TicketsMirror } from "./tickets-view.js";

/** The last decision on a provider: the guard's revision (0 = none) and its tickets. */
export interface Guard {
  revision: number;
  pending: Ticket[];
  /** The provider-state revision that decision read (0 = unknown). */
  stateRevision: number;
}

/** Room a guard value leaves below the bucket's value limit (bytes). */
const GUARD_HEADROOM_BYTES = 296;

/** The provider-state revision the last decision on a provider read, as the copy holds it. */
export function guardStateRevision(keys: KeyLayout, mirror: TicketsMirror, provider: string): number {
  const v = mirror.get(keys.guard(provider))?.value;
  return v?.kind === "guard" ? v.guard.stateRevision : 0;
}

/** The guard as the copy holds it. */
export function guardFromMirror(keys: KeyLayout, mirror: TicketsMirror, provider: string): Guard {
  const key = keys.guard(provider);
  const seen = mirror.seen(key);
  const v = mirror.get(key)?.value;
  return {
    revision: seen === undefined ? 0 : seen.revision,
    pending: v?.kind === "guard" ? v.guard.pending : [],
    stateRevision: v?.kind === "guard" ? v.guard.stateRevision : 0,
  };
}

/**
 * The guard to decide against: the one read back after a lost CAS (or our own last commit)
 * unless the copy already holds a newer one. A read-back revision 0 means the server dropped
 * the guard by TTL: trust it.
 */
export function pickGuard(
  keys: KeyLayout,
  mirror: TicketsMirror,
  provider: string,
  authoritative: Guard | null,
): Guard {
  const fromMirror = guardFromMirror(keys, mirror, provider);
  return authoritative !== null &&
    (authoritative.revision === 0 || authoritative.revision > fromMirror.revision)
    ? authoritative
    : fromMirror;
}

/**
 * Guards' pending lists the copy has seen every ticket of, with the copy's generation then. A
 * guard stays current long after its tickets are written (warm claims do not rewrite it), and
 * every claim asks about its list: once all are seen, they stay seen (their tombstones are kept
 * while the guard is current, docs/rules/state.md §10) until the copy is rebuilt.
 */
const allSeen = new WeakMap<readonly Ticket[], object>();

/** Pending tickets of a guard that the copy has never seen (not even as a tombstone), still live. */
export function unseenPending(
  keys: KeyLayout,
  mirror: TicketsMirror,
  provider: string,
  guard: Guard,
  liveNowMs: number,
): Ticket[] {
  const generation = mirror.generation;
  if (allSeen.get(guard.pending) === generation) return [];
  const out: Ticket[] = [];
  let unseen = 0;
  for (const t of guard.pending) {
    if (mirror.knows(keys.ticket({ ...t, provider }))) continue;
    unseen++;
    if (t.expiresAt === undefined || t.expiresAt > liveNowMs) out.push(t);
  }
  if (unseen === 0 && guard.pending.length > 0) allSeen.set(guard.pending, generation);
  return out;
}

/** Reads the guard from the bucket itself (when the copy does not bring the newer one). */
export async function readGuard(keys: KeyLayout, bucket: KvBucket, provider: string): Promise<Guard> {
  const e = await bucket.get(keys.guard(provider));
  if (e === null) return { revision: 0, pending: [], stateRevision: 0 };
  let raw: unknown;
  try {
    raw = decodeJson(e.value);
  } catch {
    raw = undefined;
  }
  const g = parseGuard(raw, provider);
  return { revision: e.revision, pending: g.pending, stateRevision: g.stateRevision };
}

/**
 * The guard value listing the `carried` tickets of earlier decisions not seen yet and `decided`,
 * dropping claims from the end until it fits the bucket's value limit; the dropped ones (in
 * order) wait for the next round.
 */
export function guardValue<T extends { ticket: Ticket }>(
  bucket: KvBucket,
  decided: T[],
  stateRevision: number,
  carried: readonly Ticket[] = [],
): { value: Uint8Array; deferred: T[] } {
  const limit = bucket.settings.maxValueBytes;
  const maxBytes = limit > 0 ? limit - GUARD_HEADROOM_BYTES : Number.POSITIVE_INFINITY;
  const encode = () =>
    encodeJson(guardJson({ pending: [...carried, ...decided.map((p) => p.ticket)], stateRevision }));
  let value = encode();
  const deferred: T[] = [];
  while (value.byteLength > maxBytes && decided.length > 1) {
    deferred.unshift(decided.pop()!);
    value = encode();
  }
  return { value, deferred };
}
