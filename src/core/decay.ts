// Demand rates decay with a half-life (docs/rules/placement.md §8).

export const DEMAND_HALF_LIFE_MS = 10 * 60_000;

/**
 * A rate as of `nowMs`, decayed from `updatedAtMs`: rate · 0.5^(Δ/halfLife). A timestamp in
 * the future never inflates the rate (Δ is clamped at 0).
 */
export function decayedRate(
  rate: number,
  updatedAtMs: number,
  nowMs: number,
  halfLifeMs = DEMAND_HALF_LIFE_MS,
): number {
  if (!(rate > 0) || !Number.isFinite(rate)) return 0;
  const dt = Math.max(0, nowMs - updatedAtMs);
  if (!Number.isFinite(dt)) return rate;
  return rate * 0.5 ** (dt / halfLifeMs);
}

/** The rate after one more event at `nowMs`: decay to now, then +1. */
export function bumpRate(
  rate: number,
  updatedAtMs: number,
  nowMs: number,
  halfLifeMs = DEMAND_HALF_LIFE_MS,
): number {
  return decayedRate(rate, updatedAtMs, nowMs, halfLifeMs) + 1;
}
