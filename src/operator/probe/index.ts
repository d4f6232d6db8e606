// Provider probing: pure conversion of Ollama's answers into provider state, and the
// consecutive-failure rule for readiness.
export {
  DEFAULT_FAILURE_THRESHOLD,
  ProbeFailureTracker,
  type ProbeVerdict,
} from "./failure-tracker.js";
export {
  bytesToMiB,
  formatProbedAt,
  type ProbeObservation,
  type ProviderProbeConfig,
  toProviderState,
  unreadyProviderState,
} from "./provider-state.js";
