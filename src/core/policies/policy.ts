// A placement policy (docs/rules/placement.md §5): given the indexed snapshot and a normalized
// question, the claim or queue it would make, or nothing, which the planner then classifies as
// a refusal or a wait for memory. Policies are picked by name from the registry (./index.ts).
import type { Candidate } from "../candidates.js";
import type { Decision } from "../decision.js";
import type { CachedPrefix } from "../prompt-cache.js";
import type { SnapshotIndex } from "../snapshot.js";

/** The question a policy answers, normalized by the planner. */
export interface PolicyRequest {
  /** Acceptable models, preferred first (normalized, within tolerance; never empty). */
  acceptable: readonly Candidate[];
  /** Prompt tokens; 0 = unknown, which fits every context. */
  prompt: number;
  /** False for calls that must not queue behind others (triage, cannot-wait). */
  mayQueue: boolean;
  /** Extra cost terms (points) a policy may add to its ranking; undefined = none. */
  bias: ((provider: string, model: string) => number) | undefined;
  /** Copies that hold part of this call's prompt in their prompt cache (§5.5); empty = none known. */
  cached: readonly CachedPrefix[];
  /** The call's conversation as the sidecars publish it (ConversationSeen.key); undefined = none. */
  conversation?: string | undefined;
}

/** One option a policy weighed, as a decision record shows it (docs/rules/placement.md §5). */
export interface PlanOption {
  provider: string;
  model: string;
  kind: "warm" | "cold" | "unload" | "queue";
  /** Expected seconds until the call finishes there, plus an unload's price to others. */
  seconds: number;
}

export interface Policy {
  /** The name KUBEMOOT_POLICY and the simulation select it by. */
  readonly name: string;
  /** Pure: the same index and request give the same decision; undefined = nothing to claim or queue at. */
  plan(ix: SnapshotIndex, request: PolicyRequest): Decision | undefined;
  /** Pure: the best options `plan` weighs for the same question, best first (at most `limit`); absent = not explained. */
  explain?(ix: SnapshotIndex, request: PolicyRequest, limit: number): PlanOption[];
}
