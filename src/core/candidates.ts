// Candidate models of an agent (the binder's ranked list, preferred first) and the ones
// within tolerance of the preferred (docs/rules/placement.md §5).
import { CANDIDATE_TOLERANCE_POINTS } from "./constants.js";

/** One acceptable model and its binder score (points). */
export interface Candidate {
  model: string;
  score: number;
  /**
   * The Model's declared VRAM (`Model.spec.vramMib`, MiB), when the binder knows it: sizes the
   * model before any provider has shown it loaded (docs/rules/placement.md §2).
   */
  vramMib?: number;
}

export interface ParsedCandidates {
  candidates: Candidate[];
  /** Why the list is empty or shorter than the input; undefined when it parsed cleanly. */
  reason?: string;
}

/**
 * Parses the env/ConfigMap form `[{"model":"qwen3:32b","score":70,"vramMib":21000}, ...]`
 * (`vramMib` optional). Never throws:
 * absent, blank or malformed input gives an empty list and a reason; invalid or duplicate
 * items are skipped (the reason says how many). Order is kept: the first is the preferred.
 */
export function parseCandidates(raw: string | undefined | null): ParsedCandidates {
  if (raw === undefined || raw === null) return { candidates: [], reason: "no candidate list configured" };
  if (raw.trim() === "") return { candidates: [], reason: "candidate list is blank" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    return { candidates: [], reason: `candidate list is not JSON: ${(err as Error).message}` };
  }
  if (!Array.isArray(parsed)) return { candidates: [], reason: "candidate list is not a JSON array" };
  return normalizeCandidates(parsed);
}

/**
 * Keeps the valid items of a candidate list in order: a non-empty string `model` and a
 * finite numeric `score`; the first occurrence of a model wins.
 */
export function normalizeCandidates(items: readonly unknown[]): ParsedCandidates {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  let invalid = 0;
  let duplicate = 0;
  for (const item of items) {
    const c = item as { model?: unknown; score?: unknown } | null;
    if (
      typeof c !== "object" ||
      c === null ||
      typeof c.model !== "string" ||
      c.model.trim() === "" ||
      typeof c.score !== "number" ||
      !Number.isFinite(c.score)
    ) {
      invalid++;
      continue;
    }
    if (seen.has(c.model)) {
      duplicate++;
      continue;
    }
    seen.add(c.model);
    const vram = (c as { vramMib?: unknown }).vramMib;
    // A declared size is a hint: one that is not a positive number is left out, not the model.
    const declared = typeof vram === "number" && Number.isFinite(vram) && vram > 0 ? { vramMib: vram } : {};
    out.push({ model: c.model, score: c.score, ...declared });
  }
  const notes: string[] = [];
  if (invalid > 0) notes.push(`${invalid} invalid item(s) skipped`);
  if (duplicate > 0) notes.push(`${duplicate} duplicate model(s) skipped`);
  if (out.length === 0 && notes.length === 0) notes.push("candidate list is empty");
  return notes.length === 0 ? { candidates: out } : { candidates: out, reason: notes.join("; ") };
}

/**
 * The effective tolerance: undefined or non-finite → the default (10); negative → 0 (a
 * negative tolerance would exclude candidates scoring the same as the preferred, which no
 * configuration means; 0 already says "preferred-equal scores only").
 */
export function effectiveTolerance(tolerance: number | undefined | null): number {
  if (tolerance === undefined || tolerance === null || !Number.isFinite(tolerance)) {
    return CANDIDATE_TOLERANCE_POINTS;
  }
  return Math.max(0, tolerance);
}

/**
 * The acceptable models: the preferred (first) and then every other candidate with
 * `score ≥ preferredScore − tolerance`, highest score first (list order among equal scores).
 */
export function inTolerance(candidates: readonly Candidate[], tolerance?: number | null): Candidate[] {
  const [preferred, ...rest] = candidates;
  if (preferred === undefined) return [];
  const floor = preferred.score - effectiveTolerance(tolerance);
  const others = rest
    .map((c, i) => ({ c, i }))
    .filter(({ c }) => c.model !== preferred.model && c.score >= floor)
    .sort((a, b) => b.c.score - a.c.score || a.i - b.i)
    .map(({ c }) => c);
  return [preferred, ...others];
}
