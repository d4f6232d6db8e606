// Public API of the binder: pure operator-side matching (docs/rules/binding.md). The reconcile loop
// and the `bind` dry run call `bind` over a snapshot and write what it returns.
export { BOUND_PHASES, type BoundPhase, BUILTIN_ARCHETYPES, CONSENT_3 } from "./archetypes.js";
export { bind, DEFAULT_CONCURRENCY_FACTOR, UNSCHEDULABLE_RETRY_MS } from "./bind.js";
export { type DryRunAgent, type DryRunOutput, type DryRunPhase, toDryRun } from "./dry-run.js";
export { candidatesJson } from "./env.js";
export { CREW_LABEL } from "./policy.js";
export { applyProviderStates } from "./provider-state.js";
export { effectiveBias, latencyTerm, parseBias } from "./quality-bias.js";
export { HYSTERESIS_POINTS } from "./rank.js";
export { SYSTEM_NAMESPACE } from "./resolve.js";
export {
  type CompiledSelector,
  compileSelector,
  labelKeyError,
  labelValueError,
  SELECTOR_OPERATORS,
  type SelectorCompilation,
} from "./selector.js";
export type * from "./types.js";
