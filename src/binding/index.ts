// Public API of the binder: pure operator-side matching (docs/rules/binding.md). The reconcile loop
// and the `bind` dry run call `bind` over a snapshot and write what it returns.
export { type BoundPhase, CONSENT_3 } from "./archetypes.js";
export { bind, DEFAULT_CONCURRENCY_FACTOR, UNSCHEDULABLE_RETRY_MS } from "./bind.js";
export {
  bindDiscussions,
  type DiscussionResult,
  type DiscussionThread,
  discussionInputKey,
} from "./discussion.js";
export { type DryRunOutput, type DryRunPhase, toDryRun } from "./dry-run.js";
export { agentEnv } from "./env.js";
export { CREW_LABEL } from "./policy.js";
export { applyProviderStates } from "./provider-state.js";
export { SYSTEM_NAMESPACE } from "./resolve.js";
export { compileSelector, labelKeyError, labelValueError } from "./selector.js";
export type {
  Agent,
  AgentResult,
  AgentSchedulingStatus,
  BindOptions,
  BindResult,
  Candidate,
  CapacityStrategy,
  ClusterSnapshot,
  Condition,
  CrewSchedulingPolicy,
  FairShareSpec,
  LabelSelector,
  LabelSelectorRequirement,
  Labels,
  LastUnschedulable,
  LoadedModel,
  Model,
  ModelProvider,
  MootArchetype,
  PhaseAssignment,
  PhaseBinding,
  PolicyResult,
  PreferTerm,
  ProviderCapacity,
  SchedulingEvent,
  SchedulingRule,
  TopologySpread,
  Unschedulable,
} from "./types.js";
