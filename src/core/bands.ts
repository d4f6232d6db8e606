// Priority bands (docs/rules/fairness.md §2): their order and names, a leaf of the core so that
// demand (which shields a band's models from lower bands' evictions) and fair share both read it.
import type { Band } from "./shapes.js";

/** Priority bands, highest first. Strict priority between bands. */
export const BANDS: readonly Band[] = ["interactive", "standard", "batch"];
export const DEFAULT_BAND: Band = "standard";
/** The rank of "no band" (a model no call of any band used lately): below every band. */
export const NO_BAND_RANK = BANDS.length;

/** 0 for interactive, 2 for batch: lower ranks first. */
export function bandRank(b: Band): number {
  return BANDS.indexOf(b);
}

/** A band by name (case-insensitive, trimmed); undefined when it is none of BANDS. */
export function parseBand(raw: string): Band | undefined {
  const s = raw.trim().toLowerCase();
  return BANDS.find((b) => b === s);
}

/**
 * A model used by a band this recently (ms) is that band's: a call of a lower band may not
 * unload it (docs/rules/fairness.md §5). Matches the live window of a conversation's turns.
 */
export const BAND_HOLD_MS = 5 * 60_000;
