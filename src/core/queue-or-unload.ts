// Step 5 of the planner (docs/rules/placement.md §5): when nothing is free, compare waiting for a
// busy copy with unloading idle models to make room, both in seconds of expected delay.
import { DEFAULT_CALL_TIME_S, LOAD_MIB_PER_S, UNLOAD_S } from "./constants.js";
import { expectedReloads, type ModelDemand } from "./demand.js";

/** A copy's queue as the wait estimate needs it. */
export interface QueueInput {
  /** Live tickets on this copy (provider, model): in flight plus queued. */
  tickets: number;
  /** Parallel slots, at least 1. */
  slots: number;
  /** Elapsed time of the oldest live ticket, i.e. the soonest in-flight call to finish (s). */
  oldestElapsedS: number;
  /** Expected call time (s): the provider's latency EMA, else the default 30 s. */
  callTimeS: number;
}

/**
 * Expected wait for a slot (s): 0 when a slot is free, else
 * `max(0, callTime − elapsed) + (tickets − slots) · callTime / slots`.
 */
export function queueWaitS(q: QueueInput): number {
  const slots = Math.max(1, Math.floor(q.slots));
  if (q.tickets < slots) return 0;
  const remaining = Math.max(0, q.callTimeS - Math.max(0, q.oldestElapsedS));
  const queued = q.tickets - slots;
  return remaining + (queued * q.callTimeS) / slots;
}

/** Call time of a provider (s): its latency EMA (ms) when observed, else the default. */
export function callTimeS(latencyEmaMs: number | undefined, defaultS = DEFAULT_CALL_TIME_S): number {
  return latencyEmaMs !== undefined && Number.isFinite(latencyEmaMs) && latencyEmaMs >= 0
    ? latencyEmaMs / 1000
    : defaultS;
}

/** A victim as the unload cost sees it. */
export interface UnloadVictim {
  footprintMiB: number;
  demand: ModelDemand | undefined;
}

/**
 * Expected delay of unloading (s): the requested model's load time plus, per victim, the
 * unload and the expected reloads: `F/1024 + Σ (1 + victimF/1024 · expectedReloads)`.
 */
export function unloadCostS(footprintMiB: number, victims: readonly UnloadVictim[]): number {
  let cost = Math.max(0, footprintMiB) / LOAD_MIB_PER_S;
  for (const v of victims) {
    cost += UNLOAD_S + (Math.max(0, v.footprintMiB) / LOAD_MIB_PER_S) * expectedReloads(v.demand);
  }
  return cost;
}

/** The outcome of step 5. */
export type QueueOrUnload = "queue" | "unload" | "wait-for-memory";

/** Queue wins when its wait is no longer than the unload cost; unload when cheaper or alone. */
export function queueOrUnload(queueWait: number | undefined, unloadCost: number | undefined): QueueOrUnload {
  if (queueWait !== undefined && (unloadCost === undefined || queueWait <= unloadCost)) return "queue";
  if (unloadCost !== undefined) return "unload";
  return "wait-for-memory";
}
