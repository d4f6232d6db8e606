// Small statistics helpers (pure).

/** Nearest-rank percentile of a sample (sorted or not); NaN when empty. p in [0, 100]. */
export function percentile(sample: readonly number[], p: number): number {
  if (sample.length === 0) return Number.NaN;
  const sorted = [...sample].sort((a, b) => a - b);
  return percentileSorted(sorted, p);
}

/** Nearest-rank percentile of an ascending sample. */
export function percentileSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function mean(sample: readonly number[]): number {
  if (sample.length === 0) return Number.NaN;
  let s = 0;
  for (const x of sample) s += x;
  return s / sample.length;
}

/** Rounds to `digits` decimals (keeps JSON small and stable). */
export function round(n: number, digits = 3): number {
  if (!Number.isFinite(n)) return n;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
