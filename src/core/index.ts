// Public API of the pure call-time placement core (docs/rules/placement.md). No I/O, no clocks:
// time (`nowMs`) and every observation come in as arguments.

export { agentName, agentNamespace } from "./agent-ref.js";
export { BANDS, DEFAULT_BAND, parseBand } from "./bands.js";
export type { CallOutcome, Refusal } from "./call-policy.js";
export {
  afterRefusal,
  judgeTruncation,
  learnFromCall,
  lostRaceRefusal,
  refusalOf,
} from "./call-policy.js";
export type { Candidate } from "./candidates.js";
export { inTolerance, parseCandidates } from "./candidates.js";
export type { CharsPerToken } from "./chars-per-token.js";
export {
  estimateTokens,
  generousTokens,
  INITIAL_CHARS_PER_TOKEN,
  learnCharsPerToken,
} from "./chars-per-token.js";
export { claimVerdict } from "./claim-verdict.js";
export {
  CANDIDATE_TOLERANCE_POINTS,
  FRESH_READ_MS,
  GPU_WAIT_LIMIT_S,
  HELD_PLAN_TTL_MS,
  INTENT_TTL_MS,
  PROVIDER_STALE_MS,
  RATE_ENTRY_TTL_MS,
  TICKET_LEASE_MARGIN_S,
  TICKET_LEASE_S,
  WAIT_ENTRY_TTL_MS,
} from "./constants.js";
export {
  type ConversationIndex,
  type ConversationSeen,
  indexConversations,
} from "./conversation-seen.js";
export type { CostWeights } from "./cost.js";
export { DEFAULT_COST_WEIGHTS } from "./cost.js";
export { bumpRate } from "./decay.js";
export type { ClaimDecision, Decision, QueueDecision } from "./decision.js";
export type { ModelDemand } from "./demand.js";
export { aggregateDemand } from "./demand.js";
export type { Engine } from "./engines.js";
export { DEFAULT_ENGINE, ENGINES, isEngine, isFixedModelEngine, speaksOpenAiOnly } from "./engines.js";
export {
  capBand,
  crewServices,
  DEFAULT_FAIR_SHARE,
  decayService,
  type FairShareOptions,
  type FairVerdict,
  fairGate,
  freeSlotsFor,
  jainIndex,
  serviceTokens,
  waitersAhead,
} from "./fair-share.js";
export { heldPlanUsable, selectionPromptTokens } from "./held-plan.js";
export { kvToken, kvUntoken } from "./keys.js";
export { recordLatency } from "./latency-ema.js";
export type { Phase, PlanRequest } from "./planner.js";
export { explainPlan, plan } from "./planner.js";
export { DEFAULT_POLICY, isPolicyName, POLICY_NAMES } from "./policies/index.js";
export { type CachedPrefix, cachedTokensAt, prefillRate } from "./prompt-cache.js";
export type { ChatMessage, ChatToolSpec } from "./prompt-size.js";
export { promptChars } from "./prompt-size.js";
export type { RefusalReason } from "./refusal.js";
export type {
  Band,
  DemandEntry,
  IntentEntry,
  ProviderState,
  QueueEntry,
  Residency,
  SelEntry,
  ServiceEntry,
  Ticket,
  UseEntry,
  WaitEntry,
} from "./shapes.js";
export type {
  PlacementSnapshot,
  PlannerOptions,
  PolicyName,
  ProviderHealth,
  SnapshotIndex,
} from "./snapshot.js";
export { indexSnapshot } from "./snapshot.js";
export type { BudgetView } from "./vram.js";
export {
  budgetView,
  claimFits,
  overlayCurrent,
  reserveMiB,
  residentModels,
  ticketLive,
  usableMiB,
} from "./vram.js";
