// Fair share across crews (docs/rules/fairness.md): priority bands, each crew's attained service
// decayed with a half-life, the order of waiting calls, and the gate a placement passes before
// it takes a slot that better-ranked waiters of the same model are owed. Pure: the entries
// come from the demand bucket, time comes in as `nowMs`.
import { bandRank } from "./bands.js";
import { decayedRate } from "./decay.js";
import type { ClaimDecision } from "./decision.js";
import type { Band, QueueEntry, ServiceEntry } from "./shapes.js";
import type { ProviderView, SnapshotIndex } from "./snapshot.js";

/** `asked`, lowered to `allowed` when it asks for more than the crew may (§2). */
export function capBand(asked: Band, allowed: Band): Band {
  return bandRank(asked) < bandRank(allowed) ? allowed : asked;
}

/** The knobs of the protocol (§3); every time in ms. */
export interface FairShareOptions {
  /** Half-life of attained service (default 60 s). */
  halfLifeMs: number;
  /** A waiter rises one band per this long waited (default 30 s): no band starves the next. */
  agingMs: number;
  /**
   * A free slot owed to better-ranked waiters stays theirs this long (default 100 ms); a call
   * deferred longer than that with slots still free takes one: the gate never idles a GPU for
   * a waiter that does not come, nor while two sidecars' copies of the counters disagree on
   * who is first (bench fairness: at 500 ms that idled the card a sixth of the time).
   */
  handoffMs: number;
}

export const DEFAULT_FAIR_SHARE: FairShareOptions = {
  halfLifeMs: 60_000,
  agingMs: 30_000,
  handoffMs: 100,
};

/**
 * Service a call is charged, in tokens (VTC's measure, §4): its prompt plus twice its output,
 * since a generated token costs a decode step where a prompt token shares a prefill batch.
 */
export function serviceTokens(promptTokens: number, outputTokens: number): number {
  return Math.max(0, promptTokens) + 2 * Math.max(0, outputTokens);
}

/** A decayed service figure: `service` as of `updatedAt`, read at `nowMs`. */
export function decayService(service: number, updatedAt: number, nowMs: number, halfLifeMs: number): number {
  return decayedRate(service, updatedAt, nowMs, halfLifeMs);
}

/** Per crew: the service of all its processes, decayed to `nowMs`, and the largest weight named. */
export function crewServices(
  entries: Iterable<ServiceEntry>,
  nowMs: number,
  halfLifeMs: number,
): Map<string, { service: number; weight: number }> {
  const out = new Map<string, { service: number; weight: number }>();
  for (const e of entries) {
    if (!(e.expiresAt > nowMs)) continue;
    const s = decayService(e.service, e.updatedAt, nowMs, halfLifeMs);
    const cur = out.get(e.crew);
    if (cur === undefined) out.set(e.crew, { service: s, weight: e.weight });
    else {
      cur.service += s;
      cur.weight = Math.max(cur.weight, e.weight);
    }
  }
  return out;
}

/** Where a call stands among the waiters of its model: compared field by field, lower first. */
export interface FairRank {
  /** Band rank after aging (0 = interactive): compared only against waiters of another band. */
  band: number;
  /** Band rank as asked for. */
  nominal: number;
  /** The crew's attained service over its weight. */
  normalized: number;
  since: number;
  id: string;
}

/** The call as the gate ranks it (a waiter already, or one about to be). */
export interface FairCall {
  id: string;
  crew: string;
  band: Band;
  weight: number;
  since: number;
}

export function rankOf(
  c: FairCall,
  services: ReadonlyMap<string, { service: number }>,
  nowMs: number,
  o: FairShareOptions,
): FairRank {
  const aged = o.agingMs > 0 ? Math.floor(Math.max(0, nowMs - c.since) / o.agingMs) : 0;
  return {
    band: Math.max(0, bandRank(c.band) - aged),
    nominal: bandRank(c.band),
    normalized: (services.get(c.crew)?.service ?? 0) / (c.weight > 0 ? c.weight : 1),
    since: c.since,
    id: c.id,
  };
}

/**
 * Lower first. Aging lifts a waiter over waiters of lower bands only: within its own band, age
 * is no priority (else a crew's backlog, once older than an aging period, would outrank another
 * crew's fresh calls whatever their service).
 */
export function compareRank(a: FairRank, b: FairRank): number {
  return (
    (a.nominal === b.nominal ? 0 : a.band - b.band) ||
    a.normalized - b.normalized ||
    a.since - b.since ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

export interface FairGateInput {
  call: FairCall;
  /** Live waiters of the call's model (its own record, if any, is skipped by id). */
  waiters: readonly QueueEntry[];
  services: ReadonlyMap<string, { service: number }>;
  /** Slots the model has free now, the chosen copy's included (freeSlotsFor). */
  freeSlots: number;
  /**
   * Since when (epoch ms) this call has been held back while slots were free; undefined when it
   * was not. Past the handoff time it goes anyway.
   */
  deferredWhileFreeSinceMs: number | undefined;
  nowMs: number;
  options: FairShareOptions;
}

export type FairVerdict =
  /** Take the slot. `ahead`: waiters ranked before the call (fewer than the free slots, or handed off). */
  | { admit: true; ahead: number; handedOff: boolean }
  /** Leave the free slots to the `ahead` better-ranked waiters and wait (§3). */
  | { admit: false; ahead: number };

/**
 * The gate (§3): a call may take one of the model's `freeSlots` only when fewer waiters rank
 * before it; otherwise those slots are owed to them. Live entries only.
 */
export function fairGate(g: FairGateInput): FairVerdict {
  const ahead = waitersAhead(g.call, g.waiters, g.services, g.nowMs, g.options);
  if (ahead < g.freeSlots) return { admit: true, ahead, handedOff: false };
  const since = g.deferredWhileFreeSinceMs;
  if (g.freeSlots > 0 && since !== undefined && g.nowMs - since >= g.options.handoffMs)
    return { admit: true, ahead, handedOff: true };
  return { admit: false, ahead };
}

/** How many live waiters (other than the call itself) rank before the call. */
export function waitersAhead(
  call: FairCall,
  waiters: readonly QueueEntry[],
  services: ReadonlyMap<string, { service: number }>,
  nowMs: number,
  o: FairShareOptions,
): number {
  const mine = rankOf(call, services, nowMs, o);
  let ahead = 0;
  for (const w of waiters) {
    if (w.id === call.id || !(w.expiresAt > nowMs)) continue;
    if (compareRank(rankOf(w, services, nowMs, o), mine) < 0) ahead++;
  }
  return ahead;
}

/**
 * Jain's fairness index of per-crew figures (each already divided by its weight): 1 when all
 * are equal, 1/n when one takes everything. Empty or all-zero: 1.
 */
export function jainIndex(xs: readonly number[]): number {
  let sum = 0;
  let sq = 0;
  for (const x of xs) {
    sum += x;
    sq += x * x;
  }
  return xs.length === 0 || sq === 0 ? 1 : (sum * sum) / (xs.length * sq);
}

/**
 * Slots `model` has free now across its eligible warm copies, plus the chosen copy's when the
 * claim starts a new one there: what the gate hands out (§3). A slot is what hasFreeSlot counts.
 */
export function freeSlotsFor(ix: SnapshotIndex, d: Pick<ClaimDecision, "provider" | "model">): number {
  const freeAt = (v: ProviderView) =>
    v.fixed ? Math.max(0, v.capacity - v.ahead) : Math.max(0, v.slots - (v.byModel.get(d.model)?.count ?? 0));
  let free = 0;
  let chosenCounted = false;
  for (const v of ix.warmAt.get(d.model) ?? []) {
    if (v.ineligible !== undefined) continue;
    if (v.name === d.provider) chosenCounted = true;
    free += freeAt(v);
  }
  const chosen = ix.byName.get(d.provider);
  if (!chosenCounted && chosen !== undefined) free += freeAt(chosen);
  return free;
}
