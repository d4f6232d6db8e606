// Sidecar injection: a mutating admission webhook served by the operator.
export {
  ADMISSION_API_VERSION,
  type AdmissionResponse,
  type BindingLookup,
  lookupFromAgents,
  reviewAdmission,
} from "./admission.js";
export {
  type AgentInjectionBinding,
  GRACE_MARGIN_SECONDS,
  type InjectionResult,
  injectSidecar,
  ollamaHost,
  type PodLike,
  sidecarContainer,
} from "./inject.js";
export {
  DEFAULT_INJECTION_OPTIONS,
  INJECT_LABEL,
  type InjectionOptions,
  NATS_SECRET_MOUNT,
  type NatsSecret,
  PROTECTED_NAMESPACES,
  parseInjectionOptions,
  SIDECAR_CONTAINER_NAME,
  STATUS_ANNOTATION,
  sidecarRuntimeEnv,
} from "./options.js";
export { providerEndpointEntries, withProviderEndpoints } from "./provider-endpoints.js";
export {
  type InjectionWebhook,
  type InjectionWebhookOptions,
  loadInjectionOptions,
  MUTATE_PATH,
  readCertDir,
  startInjectionWebhook,
  type WebhookTls,
} from "./server.js";
