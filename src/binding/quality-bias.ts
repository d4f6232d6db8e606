// Quality bias (docs/rules/binding.md "Score"): a crew's per-capability lean between speed (0) and
// quality (1), turned into a score term from a Model's `latencyClass` label for rules that
// have no prefer block.
import { roundHalfAwayFromZero } from "./round.js";
import type { Labels } from "./types.js";

const FLOAT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A bias value as the CRD stores it (a string); undefined unless it is a float in [0, 1]. */
export function parseBias(value: string | undefined): number | undefined {
  if (value === undefined || !FLOAT.test(value)) return undefined;
  const b = Number(value);
  return b >= 0 && b <= 1 ? b + 0 : undefined;
}

/**
 * The agent's effective bias: the max of its capabilities' valid biases, else a valid
 * `default`, else undefined (no bias term).
 */
export function effectiveBias(
  qualityBias: Readonly<Record<string, string>>,
  capabilities: readonly string[],
): number | undefined {
  let best: number | undefined;
  for (const cap of capabilities) {
    const b = Object.hasOwn(qualityBias, cap) ? parseBias(qualityBias[cap]) : undefined;
    if (b !== undefined && (best === undefined || b > best)) best = b;
  }
  if (best !== undefined) return best;
  return Object.hasOwn(qualityBias, "default") ? parseBias(qualityBias.default) : undefined;
}

/** Entries of a qualityBias map whose values are ignored because they are not floats in [0,1]. */
export function invalidBiasEntries(qualityBias: Readonly<Record<string, string>>): string[] {
  return Object.keys(qualityBias)
    .filter((k) => parseBias(qualityBias[k]) === undefined)
    .sort();
}

/**
 * The score term for a Model's latencyClass under bias b: high → round(100·b), low →
 * round(100·(1−b)), medium → max(0, round(100 − 200·|b − 0.5|)) (a tent peaking at 0.5).
 * Any other or missing latencyClass contributes 0.
 */
export function latencyTerm(b: number, labels: Labels): number {
  switch (labels.latencyClass) {
    case "high":
      return roundHalfAwayFromZero(b * 100);
    case "low":
      return roundHalfAwayFromZero((1 - b) * 100);
    case "medium":
      return Math.max(0, roundHalfAwayFromZero(100 - Math.abs(b - 0.5) * 200));
    default:
      return 0;
  }
}
