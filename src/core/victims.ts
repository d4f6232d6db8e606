// Victim choice for an unload (docs/rules/placement.md §5): only idle residents; the fewest that
// make room; among equally few, least needed first; first without models agents wait for,
// and only if that fails with them; at most 10 considered per pass.
import { MAX_VICTIMS_CONSIDERED } from "./constants.js";
import { compareLeastNeeded, type ModelDemand } from "./demand.js";
import type { ProviderView } from "./snapshot.js";

/** An idle resident that could be unloaded. */
export interface VictimCandidate {
  model: string;
  /** MiB it frees. */
  footprintMiB: number;
  demand: ModelDemand | undefined;
}

/**
 * Idle residents of a provider: no live ticket on it, not planned by another ticket, not the
 * requested model, and not held by a higher band than the call's.
 */
export function idleResidents(
  v: ProviderView,
  requestedModel: string,
  demand: ReadonlyMap<string, ModelDemand>,
): VictimCandidate[] {
  const out: VictimCandidate[] = [];
  if (v.fixed) return out; // a fixed-model engine unloads nothing (docs/rules/engines.md "Placement")
  for (const [model, mib] of v.resident) {
    if (model === requestedModel || v.byModel.has(model) || v.plannedVictims.has(model)) continue;
    const d = demand.get(model);
    if (d?.shielded === true) continue; // a higher band's (docs/rules/fairness.md §5)
    out.push({ model, footprintMiB: mib, demand: d });
  }
  return out;
}

/**
 * The fewest of `pool` (already in least-needed order), at least `minCount`, whose footprints
 * sum to ≥ need; among equally few, the first combination in that order (lexicographic by
 * position).
 */
function fewestFirst(
  pool: readonly VictimCandidate[],
  needMiB: number,
  minCount: number,
): VictimCandidate[] | undefined {
  // The minimum count: take the largest first until the need is met.
  const sizes = pool.map((c) => c.footprintMiB).sort((a, b) => b - a);
  let k = 0;
  let sum = 0;
  while ((sum < needMiB || k < minCount) && k < sizes.length) sum += sizes[k++]!;
  if (sum < needMiB || k < minCount) return undefined;
  const pick: number[] = [];
  const search = (start: number, acc: number): boolean => {
    if (pick.length === k) return acc >= needMiB;
    for (let i = start; i <= pool.length - (k - pick.length); i++) {
      pick.push(i);
      if (search(i + 1, acc + pool[i]!.footprintMiB)) return true;
      pick.pop();
    }
    return false;
  };
  return search(0, 0) ? pick.map((i) => pool[i]!) : undefined;
}

/**
 * Victims freeing at least `needMiB` and at least `minCount` models (the engine's loaded-model
 * limit), or undefined when the idle residents cannot. No need at all needs no victim ([]).
 */
export function chooseVictims(
  idle: readonly VictimCandidate[],
  needMiB: number,
  maxConsidered = MAX_VICTIMS_CONSIDERED,
  minCount = 0,
): VictimCandidate[] | undefined {
  if (!(needMiB > 0) && !(minCount > 0)) return [];
  const ordered = [...idle].sort((a, b) => compareLeastNeeded(a.model, a.demand, b.model, b.demand));
  const unwaited = ordered.filter((c) => (c.demand?.waiters ?? 0) === 0);
  const first = fewestFirst(unwaited.slice(0, maxConsidered), needMiB, minCount);
  if (first !== undefined) return first;
  if (unwaited.length === ordered.length) return undefined;
  return fewestFirst(ordered.slice(0, maxConsidered), needMiB, minCount);
}
