// Ranking of placement options: lowest cost, then lower observed latency, then provider name,
// then model name. The last two make the order total, so the winner never depends on the
// order in which providers or tickets were read.
import { DEFAULT_CALL_TIME_S } from "./constants.js";

/** One option as the ranking sees it. */
export interface Ranked {
  provider: string;
  model: string;
  /** Weighted cost (points). */
  cost: number;
  /** The provider's latency EMA (ms); undefined when none was observed. */
  latencyEmaMs: number | undefined;
}

// A provider without a latency sample ranks as if its calls took the default call time.
const UNOBSERVED_LATENCY_MS = DEFAULT_CALL_TIME_S * 1000;

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative when `a` ranks before `b`. */
export function compareRanked(a: Ranked, b: Ranked): number {
  if (a.cost !== b.cost) return a.cost < b.cost ? -1 : 1;
  const la = a.latencyEmaMs ?? UNOBSERVED_LATENCY_MS;
  const lb = b.latencyEmaMs ?? UNOBSERVED_LATENCY_MS;
  if (la !== lb) return la < lb ? -1 : 1;
  return cmpStr(a.provider, b.provider) || cmpStr(a.model, b.model);
}

/** A sorted copy, best first. */
export function rank<T extends Ranked>(options: readonly T[]): T[] {
  return [...options].sort(compareRanked);
}

/** The best option, or undefined; O(n), no sort. */
export function best<T extends Ranked>(options: Iterable<T>): T | undefined {
  let top: T | undefined;
  for (const o of options) if (top === undefined || compareRanked(o, top) < 0) top = o;
  return top;
}
