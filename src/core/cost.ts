// The weighted cost of running a model on a provider (docs/rules/placement.md §4), lowest wins.
// Warm reuse, cold loads onto free room and eviction are regions of this one function.
import {
  COST_BEST_FIT,
  COST_COLD_LOAD,
  COST_EVICT_IDLE,
  COST_EVICT_LIVE,
  COST_PREFIX_CACHE,
  COST_RELIABILITY_WEIGHT,
  COST_SPILL,
} from "./constants.js";

/** The cost weights (points); configuration may override any of them. */
export interface CostWeights {
  /** Multiplies `active / max(maxParallel, 1)`; the spec's table has it at 1. */
  contention: number;
  reliability: number;
  spill: number;
  coldLoad: number;
  evictLive: number;
  evictIdle: number;
  bestFit: number;
  /**
   * Points off a copy holding the call's prompt prefix, times the share of a call there its
   * cache saves (0..1): the weighted policy's prompt-cache term (§5.5).
   */
  prefixCache: number;
}

export const DEFAULT_COST_WEIGHTS: CostWeights = Object.freeze({
  contention: 1,
  reliability: COST_RELIABILITY_WEIGHT,
  spill: COST_SPILL,
  coldLoad: COST_COLD_LOAD,
  evictLive: COST_EVICT_LIVE,
  evictIdle: COST_EVICT_IDLE,
  bestFit: COST_BEST_FIT,
  prefixCache: COST_PREFIX_CACHE,
});

/** What the cost of one (provider, model) option depends on. */
export interface CostInput {
  /** Live tickets on the provider (all models). */
  active: number;
  maxParallel: number;
  /** Success rate of (provider, model), 0..1 (1.0 before enough samples). */
  successRate: number;
  /** Sum of the footprints the operator published from /api/ps (MiB). */
  publishedResidentMiB: number;
  /** Usable VRAM (MiB); 0 when the total is unknown. */
  usableMiB: number;
  /** usable − resident − in-flight cold loads, floored at 0 (MiB). */
  freeMiB: number;
  /** Occupancy F of the model (MiB); 0 when unknown (then best fit and shortfall read 0). */
  footprintMiB: number;
  warm: boolean;
}

/** Each term of the cost and their sum (points). */
export interface CostBreakdown {
  contention: number;
  reliability: number;
  spill: number;
  load: number;
  evict: number;
  bestFit: number;
  total: number;
}

export function costBreakdown(c: CostInput, w: CostWeights = DEFAULT_COST_WEIGHTS): CostBreakdown {
  const F = Number.isFinite(c.footprintMiB) && c.footprintMiB > 0 ? c.footprintMiB : 0;
  const contention = (w.contention * Math.max(0, c.active)) / Math.max(c.maxParallel, 1);
  const reliability = w.reliability * (1 - Math.min(1, Math.max(0, c.successRate)));
  const spill = c.publishedResidentMiB > c.usableMiB ? w.spill : 0;
  const load = c.warm ? 0 : w.coldLoad;
  let evict = 0;
  if (!c.warm && F > c.freeMiB) {
    evict = c.active > 0 ? w.evictLive : w.evictIdle * (1 + Math.min(1, (F - c.freeMiB) / F));
  }
  // An unknown footprint cannot say how well it fits; it scores neutral.
  const bestFit = F > 0 ? (w.bestFit * Math.max(0, c.usableMiB - F)) / F : 0;
  return {
    contention,
    reliability,
    spill,
    load,
    evict,
    bestFit,
    total: contention + reliability + spill + load + evict + bestFit,
  };
}

/** The total cost (points): the same terms as costBreakdown, summed without allocating. */
export function costOf(c: CostInput, w: CostWeights = DEFAULT_COST_WEIGHTS): number {
  const F = Number.isFinite(c.footprintMiB) && c.footprintMiB > 0 ? c.footprintMiB : 0;
  let total = (w.contention * Math.max(0, c.active)) / Math.max(c.maxParallel, 1);
  total += w.reliability * (1 - Math.min(1, Math.max(0, c.successRate)));
  if (c.publishedResidentMiB > c.usableMiB) total += w.spill;
  if (!c.warm) {
    total += w.coldLoad;
    if (F > c.freeMiB)
      total += c.active > 0 ? w.evictLive : w.evictIdle * (1 + Math.min(1, (F - c.freeMiB) / F));
  }
  if (F > 0) total += (w.bestFit * Math.max(0, c.usableMiB - F)) / F;
  return total;
}
