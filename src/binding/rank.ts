// Ranking feasible pairs and the hysteresis that keeps an agent where it is
// (docs/rules/binding.md "Ties").
import { cmp } from "./order.js";
import type { ScoredPair } from "./score.js";
import type { PhaseAssignment } from "./types.js";

/** An agent moves off its current provider only for more than this many points. */
export const HYSTERESIS_POINTS = 25;

/**
 * Higher score first, then the smaller declared vramMib (undeclared after declared), then the
 * Model name (then namespace, so that the order is total).
 */
export function compareScored(a: ScoredPair, b: ScoredPair): number {
  if (a.score !== b.score) return b.score - a.score;
  const va = a.model.spec.vramMib;
  const vb = b.model.spec.vramMib;
  if (va !== vb) {
    if (va === undefined) return 1;
    if (vb === undefined) return -1;
    return va - vb;
  }
  return cmp(a.model.name, b.model.name) || cmp(a.model.namespace ?? "", b.model.namespace ?? "");
}

export function rank(pairs: readonly ScoredPair[]): ScoredPair[] {
  return [...pairs].sort(compareScored);
}

/**
 * The pick from a ranked list: the best, unless the agent is currently on a provider that is
 * still in the list and the best beats the incumbent by no more than `margin`. The incumbent is
 * the current (model, provider) when it is still feasible, else the best pair on the current
 * provider.
 */
export function pickWithHysteresis(
  ranked: readonly ScoredPair[],
  current: Partial<PhaseAssignment> | undefined,
  margin = HYSTERESIS_POINTS,
): ScoredPair | undefined {
  const best = ranked[0];
  if (!best || !current?.provider) return best;
  const onProvider = ranked.filter((p) => p.provider.name === current.provider);
  const incumbent =
    onProvider.find((p) =>
      current.modelRef !== undefined
        ? p.model.name === current.modelRef
        : p.model.spec.model === current.model,
    ) ?? onProvider[0];
  if (!incumbent) return best;
  return best.score - incumbent.score > margin ? best : incumbent;
}
