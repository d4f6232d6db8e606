// Which candidates a call chooses among (docs/rules/binding.md §9): its own when it brings any,
// else its thread's published binding for its phase, else the pod's static ones. A call that
// takes its thread's binding carries that binding's revision into its placement, refusal and
// attribution; a binding that says no model fits the phase refuses the call at once, with the
// binder's reason, instead of trying every provider.
import type { Candidate } from "../core/index.js";
import { ErrorCode, KubemootError, printable } from "../errors/index.js";
import { SETTINGS } from "../settings/index.js";
import type { SchedulerConfig } from "./config.js";
import type { CallLedger } from "./ledger.js";
import type { DiscussionLink, Phase, PlaceOutcome, RefusalOut } from "./types.js";

export interface CallCandidates {
  candidates: Candidate[];
  /** The revision of the thread's binding they came from; 0 when none. */
  bindingRevision: number;
  /** Set when the thread's binding says no model fits: the binder's reason. */
  unschedulable?: string;
}

export function resolveCandidates(
  cfg: SchedulerConfig,
  link: DiscussionLink | undefined,
  call: { phase: Phase; candidates: Candidate[]; agent: string; threadId: string },
): CallCandidates {
  if (call.candidates.length > 0) return { candidates: call.candidates, bindingRevision: 0 };
  const bound = call.threadId ? link?.binding(call.agent || cfg.agent, call.threadId, call.phase) : undefined;
  if (bound?.kind === "unschedulable")
    return { candidates: [], bindingRevision: bound.revision, unschedulable: bound.reason };
  if (bound !== undefined && bound.candidates.length > 0)
    return { candidates: bound.candidates, bindingRevision: bound.revision };
  const own = call.phase === "triage" ? cfg.candidatesTriage : cfg.candidatesMulling;
  return { candidates: own, bindingRevision: 0 };
}

/** INVALID_ARGUMENT when a call has no candidates at all (none given, bound or configured). */
export function requireCandidates(phase: Phase, candidates: readonly Candidate[]): void {
  if (candidates.length > 0) return;
  const setting = phase === "triage" ? SETTINGS.candidatesTriage : SETTINGS.candidatesMulling;
  throw new KubemootError(
    ErrorCode.InvalidArgument,
    `candidates: empty, and no ${setting.name} is configured`,
    {
      field: "candidates",
    },
  );
}

/** The refusal of a call whose thread's binding says no model fits its phase. */
export function unschedulableRefusal(
  call: { threadId: string; phase: Phase },
  resolved: CallCandidates,
  promptTokens: number,
): PlaceOutcome {
  const refusal: RefusalOut = {
    reason: "unschedulable",
    model: "",
    message: printable(
      `No model fits the ${call.phase} phase of thread ${call.threadId} now: ${resolved.unschedulable ?? ""}. ` +
        "The operator binds the thread again when capacity changes.",
    ),
    largestContext: 0,
    waitable: false,
    promptTokens,
    bindingRevision: resolved.bindingRevision,
  };
  return { kind: "refused", refusal };
}

/**
 * Marks an outcome (and its ticket's ledger entry) with the binding revision it was decided by.
 * A held plan taken keeps the revision its Commit was decided by (none, when it had candidates
 * of its own).
 */
export function stampBindingRevision(outcome: PlaceOutcome, revision: number, ledger: CallLedger): void {
  if (revision === 0 || (outcome.kind === "placed" && outcome.placement.fromPlan)) return;
  if (outcome.kind === "refused") {
    outcome.refusal.bindingRevision = revision;
    return;
  }
  outcome.placement.bindingRevision = revision;
  const entry = ledger.get(outcome.placement.ticketId);
  if (entry) entry.bindingRevision = revision;
}
