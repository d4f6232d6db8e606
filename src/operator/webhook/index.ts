// Sidecar injection: a mutating admission webhook served by the operator.
export { lookupFromAgents, reviewAdmission } from "./admission.js";
export {
  type AgentInjectionBinding,
  injectSidecar,
  ollamaHost,
  type PodLike,
  sidecarContainer,
} from "./inject.js";
export {
  DEFAULT_INJECTION_OPTIONS,
  type InjectionOptions,
  parseInjectionOptions,
  SIDECAR_CONTAINER_NAME,
  STATUS_ANNOTATION,
  sidecarRuntimeEnv,
} from "./options.js";
export { withProviderEndpoints } from "./provider-endpoints.js";
export { type InjectionWebhook, loadInjectionOptions, MUTATE_PATH, startInjectionWebhook } from "./server.js";
