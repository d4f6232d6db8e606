// Planning at selection (docs/rules/placement.md §7): a plan claimed at Commit time is taken by
// the thread's first Place only if it still fits the real prompt.
import { type CharsPerToken, estimateTokens, INITIAL_CHARS_PER_TOKEN } from "./chars-per-token.js";
import { ASSUMED_PROMPT_CHARS } from "./constants.js";
import { holds } from "./context-fit.js";
import { contextAt, type SnapshotIndex } from "./snapshot.js";

/** A plan held for a thread: where it was claimed. */
export interface HeldPlan {
  provider: string;
  model: string;
}

export type HeldPlanCheck =
  | { usable: true; contextLength: number }
  | { usable: false; reason: "provider-gone" | "stale" | "not-ready" | "context-too-small" };

/**
 * Whether a held plan can serve the real prompt: its provider is still known and fresh,
 * still ready, and the context of (provider, model) holds the prompt. An open circuit does
 * not void it: the ticket is already claimed and the load started; the call's own outcome
 * feeds the breaker.
 */
export function heldPlanUsable(ix: SnapshotIndex, plan: HeldPlan, promptTokens: number): HeldPlanCheck {
  const v = ix.byName.get(plan.provider);
  if (v === undefined) return { usable: false, reason: "provider-gone" };
  if (v.ineligible === "stale") return { usable: false, reason: "stale" };
  if (v.state.ready !== true) return { usable: false, reason: "not-ready" };
  const ctx = contextAt(v, plan.model);
  if (!holds(ctx, promptTokens)) return { usable: false, reason: "context-too-small" };
  return { usable: true, contextLength: ctx ?? 0 };
}

/** Prompt tokens assumed when placing at selection time: 16000 chars at the learned ratio. */
export function selectionPromptTokens(ratio: CharsPerToken = INITIAL_CHARS_PER_TOKEN): number {
  return estimateTokens(ASSUMED_PROMPT_CHARS, ratio);
}
