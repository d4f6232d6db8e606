// Demand per model (docs/rules/placement.md §5, §8), aggregated from the demand bucket's entries.
// It orders victims (least needed first) and weights their reload cost; it never loads.
import { BAND_HOLD_MS, bandRank, NO_BAND_RANK } from "./bands.js";
import { RELOAD_RECENT_WEIGHT } from "./constants.js";
import { decayedRate } from "./decay.js";
import type { Band, DemandEntry } from "./shapes.js";

/** What is known about the near-future need of one model. */
export interface ModelDemand {
  /** Agents waiting for capacity to run this model. */
  waiters: number;
  /** Agents whose threads plan to call this model. */
  intents: number;
  /** Decayed rate of calls to the model (events, 10-min half-life). */
  recentUse: number;
  /** Sum of the decayed selection rates of agents naming the model. */
  predicted: number;
  /** Epoch ms of the model's last use; 0 when unknown. */
  lastUsedAtMs: number;
  /** The fleet's service-time EMA of the model (ms); 0 when unknown. */
  serviceMs: number;
  /**
   * The highest band (its rank, 0 = interactive) that waits for the model or used it within
   * BAND_HOLD_MS; NO_BAND_RANK when none (docs/rules/fairness.md §5).
   */
  topBand: number;
  /** Set by the planner for one call: a higher band holds the model, the call may not unload it. */
  shielded?: boolean;
}

export const NO_DEMAND: ModelDemand = Object.freeze({
  waiters: 0,
  intents: 0,
  recentUse: 0,
  predicted: 0,
  lastUsedAtMs: 0,
  serviceMs: 0,
  topBand: NO_BAND_RANK,
});

function live(expiresAt: unknown, nowMs: number): boolean {
  // An entry without a usable expiresAt lives until the bucket TTL removes it.
  return typeof expiresAt !== "number" || !Number.isFinite(expiresAt) || expiresAt > nowMs;
}

function num(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) ? n : 0;
}

/** Aggregates raw demand entries at `nowMs`, skipping expired ones. */
export function aggregateDemand(entries: Iterable<DemandEntry>, nowMs: number): Map<string, ModelDemand> {
  const out = new Map<string, ModelDemand>();
  const waiters = new Map<string, Set<string>>();
  const intents = new Map<string, Set<string>>();
  // A model may have several use entries (one per namespace, docs/rules/state.md §2.4): its
  // service time is the most recently updated one's.
  const serviceAt = new Map<string, number>();
  const get = (model: string): ModelDemand => {
    let d = out.get(model);
    if (d === undefined) {
      d = { ...NO_DEMAND };
      out.set(model, d);
    }
    return d;
  };
  const addAgent = (index: Map<string, Set<string>>, model: string, agent: string): number => {
    let s = index.get(model);
    if (s === undefined) {
      s = new Set();
      index.set(model, s);
    }
    s.add(agent);
    return s.size;
  };
  for (const e of entries) {
    if (e === null || typeof e !== "object" || !live(e.expiresAt, nowMs)) continue;
    switch (e.kind) {
      case "wait":
        if (typeof e.model === "string") get(e.model).waiters = addAgent(waiters, e.model, String(e.agent));
        break;
      case "intent":
        if (typeof e.model === "string") get(e.model).intents = addAgent(intents, e.model, String(e.agent));
        break;
      case "queue":
        if (typeof e.model === "string") {
          const d = get(e.model);
          d.topBand = Math.min(d.topBand, bandRank(e.band));
        }
        break;
      case "use": {
        if (typeof e.model !== "string") break;
        const d = get(e.model);
        for (const [band, at] of Object.entries(e.bands ?? {}) as [Band, number][]) {
          if (nowMs - at < BAND_HOLD_MS && bandRank(band) >= 0)
            d.topBand = Math.min(d.topBand, bandRank(band));
        }
        d.recentUse += decayedRate(num(e.rate), num(e.updatedAt), nowMs);
        d.lastUsedAtMs = Math.max(d.lastUsedAtMs, num(e.lastUsedAt));
        const at = num(e.updatedAt);
        if (num(e.serviceMs) > 0 && at >= (serviceAt.get(e.model) ?? Number.NEGATIVE_INFINITY)) {
          d.serviceMs = num(e.serviceMs);
          serviceAt.set(e.model, at);
        }
        break;
      }
      case "sel": {
        const rate = decayedRate(num(e.rate), num(e.updatedAt), nowMs);
        if (rate <= 0 || !Array.isArray(e.models)) break;
        for (const model of new Set(e.models)) {
          if (typeof model === "string") get(model).predicted += rate;
        }
        break;
      }
    }
  }
  return out;
}

/** Expected near-future reloads of a model: waiters + intents + 0.5 · (recentUse + predicted). */
export function expectedReloads(d: ModelDemand | undefined): number {
  if (d === undefined) return 0;
  return d.waiters + d.intents + RELOAD_RECENT_WEIGHT * (d.recentUse + d.predicted);
}

/**
 * "Least needed first": fewer waiting agents, then fewer intents, then lower recent use +
 * prediction, then least recently used, then model name.
 */
export function compareLeastNeeded(
  a: string,
  da: ModelDemand | undefined,
  b: string,
  db: ModelDemand | undefined,
): number {
  const x = da ?? NO_DEMAND;
  const y = db ?? NO_DEMAND;
  return (
    x.waiters - y.waiters ||
    x.intents - y.intents ||
    x.recentUse + x.predicted - (y.recentUse + y.predicted) ||
    x.lastUsedAtMs - y.lastUsedAtMs ||
    (a < b ? -1 : a > b ? 1 : 0)
  );
}
