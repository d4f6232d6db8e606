// Public API of the pure call-time placement core (docs/rules/placement.md). No I/O, no clocks:
// time (`nowMs`) and every observation come in as arguments.

export type { CallOutcome, CallResult, PromptReport, Refusal, RefusedCall } from "./call-policy.js";
export {
  afterRefusal,
  judgeTruncation,
  learnFromCall,
  lostRaceRefusal,
  refusalOf,
} from "./call-policy.js";
export { anyCanRun, couldHold } from "./can-run.js";
export type { Candidate, ParsedCandidates } from "./candidates.js";
export { effectiveTolerance, inTolerance, normalizeCandidates, parseCandidates } from "./candidates.js";
export type { CharsPerToken } from "./chars-per-token.js";
export {
  estimateTokens,
  generousTokens,
  INITIAL_CHARS_PER_TOKEN,
  learnable,
  learnCharsPerToken,
  promptTokens,
} from "./chars-per-token.js";
export type { CircuitOptions, CircuitState } from "./circuit-breaker.js";
export {
  CLOSED_CIRCUIT,
  circuitOpen,
  DEFAULT_CIRCUIT_OPTIONS,
  recordFailure,
  recordSuccess,
} from "./circuit-breaker.js";
export { type ClaimVerdict, type ClaimView, claimVerdict } from "./claim-verdict.js";
export * from "./constants.js";
export { anyCanHold, contextOf, holds, largestContext } from "./context-fit.js";
export type { CostBreakdown, CostInput, CostWeights } from "./cost.js";
export { costBreakdown, costOf, DEFAULT_COST_WEIGHTS } from "./cost.js";
export { bumpRate, decayedRate } from "./decay.js";
export type {
  ClaimDecision,
  Decision,
  PlanStep,
  QueueDecision,
  RefuseDecision,
  WaitForMemoryDecision,
} from "./decision.js";
export type { ModelDemand } from "./demand.js";
export { aggregateDemand, compareLeastNeeded, expectedReloads, NO_DEMAND } from "./demand.js";
export type { IneligibleReason } from "./eligibility.js";
export { ineligibility, isStale } from "./eligibility.js";
export type { Engine } from "./engines.js";
export { DEFAULT_ENGINE, ENGINES, isEngine, isFixedModelEngine, speaksOpenAiOnly } from "./engines.js";
export { loadLeftS, loadS, serviceS, slotWaitS, unloadPriceS } from "./expected-time.js";
export type { Feasibility, InfeasibleReason, VramVerdict } from "./feasibility.js";
export { feasibility, isWarm, vramFeasibility, vramVerdict } from "./feasibility.js";
export type { HeldPlan, HeldPlanCheck } from "./held-plan.js";
export { heldPlanUsable, selectionPromptTokens } from "./held-plan.js";
export { kvToken } from "./keys.js";
export type { LatencyEma } from "./latency-ema.js";
export { recordLatency } from "./latency-ema.js";
export type { Occupancy, OccupancySource } from "./occupancy.js";
export { nameEstimateMiB, paramsFromName, resolveOccupancy } from "./occupancy.js";
export type { Phase, PlanRequest } from "./planner.js";
export { decide, plan } from "./planner.js";
export {
  DEFAULT_POLICY,
  isPolicyName,
  POLICY_NAMES,
  type Policy,
  type PolicyRequest,
  policyNamed,
} from "./policies/index.js";
export type { ChatContentPart, ChatMessage, ChatToolCall, ChatToolSpec } from "./prompt-size.js";
export { messageChars, nextPromptTokens, promptChars, toolsChars } from "./prompt-size.js";
export type { QueueInput, QueueOrUnload, UnloadVictim } from "./queue-or-unload.js";
export { callTimeS, queueOrUnload, queueWaitS, unloadCostS } from "./queue-or-unload.js";
export type { Ranked } from "./ranking.js";
export { compareRanked, rank } from "./ranking.js";
export type { RefusalClass, RefusalReason } from "./refusal.js";
export { classifyRefusal } from "./refusal.js";
export type {
  DemandEntry,
  IntentEntry,
  ProviderState,
  Residency,
  SelEntry,
  Ticket,
  UseEntry,
  WaitEntry,
} from "./shapes.js";
export type {
  ModelTickets,
  PlacementSnapshot,
  PlannerOptions,
  PolicyName,
  ProviderHealth,
  ProviderView,
  SnapshotIndex,
} from "./snapshot.js";
export { contextAt, DEFAULT_PLANNER_OPTIONS, indexSnapshot, oldestClaimedMs, slotsOf } from "./snapshot.js";
export type { SuccessRate } from "./success-rate.js";
export { NO_SUCCESS_SAMPLES, recordOutcome, successRateValue } from "./success-rate.js";
export type { VictimCandidate } from "./victims.js";
export { chooseVictims, idleResidents } from "./victims.js";
export type { BudgetView } from "./vram.js";
export {
  budgetView,
  claimFits,
  inFlightLoads,
  isInFlightLoad,
  overlayCurrent,
  reserveMiB,
  residentMiB,
  residentModels,
  ticketLive,
  usableMiB,
  victimCreditMiB,
} from "./vram.js";
