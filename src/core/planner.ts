// The per-call planner (docs/rules/placement.md §5): normalizes the question, hands it to the
// placement policy the snapshot was indexed for (./policies: by expected seconds, the default,
// or Kubemoot's weighted cost), and classifies what is left when the policy finds nothing to
// claim or queue at. Every policy applies both hard filters (VRAM and context) for the same
// provider and model.
import { bandRank } from "./bands.js";
import { type Candidate, inTolerance, normalizeCandidates } from "./candidates.js";
import type { Decision } from "./decision.js";
import type { ModelDemand } from "./demand.js";
import { type PlanOption, type PolicyRequest, policyNamed } from "./policies/index.js";
import type { CachedPrefix } from "./prompt-cache.js";
import { classifyRefusal, noCandidateMessage } from "./refusal.js";
import type { Band } from "./shapes.js";
import {
  indexSnapshot,
  type PlacementSnapshot,
  type PlannerOptions,
  type SnapshotIndex,
} from "./snapshot.js";

/** Call phases: "triage" places only its bound model and never waits. */
export type Phase = "mulling" | "triage";

/** One placement question. */
export interface PlanRequest {
  /** Acceptable models, preferred first (invalid and duplicate items are ignored). */
  candidates: readonly Candidate[];
  /** Score points below the preferred still acceptable; default 10, negative → 0. */
  tolerance?: number;
  /** Prompt size (tokens); 0 or absent = unknown, which fits every context. */
  promptTokens?: number;
  /**
   * A generous (low) count of the same prompt, when `promptTokens` is an estimate. A call whose
   * estimate fits no context is placed by this count instead before it is refused: a prompt is
   * refused only when even the generous count cannot fit (the engine's own count then judges).
   */
  generousPromptTokens?: number;
  /** Default "mulling". */
  phase?: Phase;
  /**
   * A call that must not queue behind others (a coordinator's advisory or synthesis call):
   * never placed on a copy without a free slot, never told to queue. Triage never queues either.
   */
  cannotWait?: boolean;
  /** Carried for callers; the context filter is about the prompt only (docs/rules/placement.md §3). */
  maxOutputTokens?: number;
  /** Extra cost terms (points), e.g. CrewSchedulingPolicy biases; added to the weighted cost. */
  costBias?: (provider: string, model: string) => number;
  /**
   * Copies that hold part of this call's prompt in their prompt cache (the conversation's last
   * turn ran there): a call there prefills only the rest (docs/rules/placement.md §5.5).
   */
  cachedPrefixes?: readonly CachedPrefix[];
  /**
   * The call's conversation as the sidecars publish it (ConversationSeen.key): a copy whose slots
   * hold other live conversations prices the one it would push out, but not this one's own.
   */
  conversationKey?: string;
  /**
   * The call's priority band (docs/rules/fairness.md §5): models a higher band waits for or used
   * lately are not unloaded for it. Absent = no band's models are shielded from it.
   */
  band?: Band;
}

/**
 * The index as a call of `band` plans on it: the demand of models a higher band holds marked
 * shielded, so that no policy picks them as victims. The index itself when none is.
 */
function shieldedFor(ix: SnapshotIndex, band: Band | undefined): SnapshotIndex {
  if (band === undefined) return ix;
  const rank = bandRank(band);
  let demand: Map<string, ModelDemand> | undefined;
  for (const [model, d] of ix.demand) {
    if (d.topBand >= rank) continue;
    demand ??= new Map(ix.demand);
    demand.set(model, { ...d, shielded: true });
  }
  return demand === undefined ? ix : { ...ix, demand };
}

function cleanPrompt(n: number | undefined): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0;
}

/** Plans one call against an indexed snapshot. Pure: same index and request, same decision. */
export function plan(ix: SnapshotIndex, req: PlanRequest): Decision {
  const { candidates } = normalizeCandidates(req.candidates ?? []);
  const triage = req.phase === "triage";
  const acceptable = triage ? candidates.slice(0, 1) : inTolerance(candidates, req.tolerance);
  if (acceptable[0] === undefined) {
    return {
      kind: "refuse",
      reason: "gpu-busy",
      model: "",
      message: noCandidateMessage(),
      largestContext: 0,
    };
  }
  const prompt = cleanPrompt(req.promptTokens);
  const mayQueue = !triage && req.cannotWait !== true;
  const policy = policyNamed(ix.options.policy);
  const decided = policy.plan(shieldedFor(ix, req.band), policyRequest(req, acceptable, prompt, mayQueue));
  return decided ?? noClaim(ix, req, acceptable, prompt, !mayQueue);
}

function policyRequest(
  req: PlanRequest,
  acceptable: readonly Candidate[],
  prompt: number,
  mayQueue: boolean,
): PolicyRequest {
  return {
    acceptable,
    prompt,
    mayQueue,
    bias: req.costBias,
    cached: req.cachedPrefixes ?? [],
    conversation: req.conversationKey,
  };
}

/**
 * The best options the policy weighs for this call, best first (at most `limit`): what a decision
 * record shows beside the decision. Empty for a policy that does not explain itself. Pure.
 */
export function explainPlan(ix: SnapshotIndex, req: PlanRequest, limit = 3): PlanOption[] {
  const { candidates } = normalizeCandidates(req.candidates ?? []);
  const triage = req.phase === "triage";
  const acceptable = triage ? candidates.slice(0, 1) : inTolerance(candidates, req.tolerance);
  const policy = policyNamed(ix.options.policy);
  if (acceptable.length === 0 || policy.explain === undefined) return [];
  const mayQueue = !triage && req.cannotWait !== true;
  const request = policyRequest(req, acceptable, cleanPrompt(req.promptTokens), mayQueue);
  return policy.explain(shieldedFor(ix, req.band), request, limit);
}

/**
 * Nothing to claim and no copy to queue at: a classified refusal, or a wait for memory. A
 * prompt too large by its estimate is planned again by its generous count first.
 */
function noClaim(
  ix: SnapshotIndex,
  req: PlanRequest,
  acceptable: readonly Candidate[],
  prompt: number,
  neverWaits: boolean,
): Decision {
  const preferred = acceptable[0]!;
  const r = classifyRefusal(ix, acceptable, prompt);
  const generous = cleanPrompt(req.generousPromptTokens);
  if (r.reason === "prompt-too-large" && generous > 0 && generous < prompt) {
    return plan(ix, { ...req, promptTokens: generous, generousPromptTokens: 0 });
  }
  if (r.reason !== "gpu-busy" || neverWaits) {
    return {
      kind: "refuse",
      reason: r.reason,
      model: preferred.model,
      message: r.message,
      largestContext: r.largestContext,
    };
  }
  return { kind: "wait-for-memory", model: preferred.model, message: r.message };
}

/** Indexes a snapshot and plans one call: the convenience form of indexSnapshot + plan. */
export function decide(
  snapshot: PlacementSnapshot,
  req: PlanRequest,
  options?: Partial<PlannerOptions>,
): Decision {
  return plan(indexSnapshot(snapshot, options), req);
}
