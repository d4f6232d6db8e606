// Kubernetes wiring of the operator: client calls with explicit patch content types, resilient
// informers, the store (caches + own writes), object conversion and the Kubernetes sink.
export { Backoff, type BackoffOptions, DEFAULT_BACKOFF } from "./backoff.js";
export {
  ClientNodeKubeApi,
  errorMessage,
  FIELD_MANAGER,
  httpStatus,
  JSON_PATCH,
  type JsonPatchOp,
  type KubeApi,
  type KubeList,
  type KubeObject,
  MERGE_PATCH,
} from "./client.js";
export { type KubeConfigOptions, kubeConfigForServer, loadKubeConfig } from "./config.js";
export {
  AGENT_LABEL,
  deploymentsByAgent,
  ENV_CONTAINERS_ANNOTATION,
  MANAGED_ENV,
  planEnvPatch,
} from "./env.js";
export { DEFAULT_EVENT_REPEAT_MS, REPORTING_COMPONENT } from "./events.js";
export { type InformerEvent, type InformerOptions, ResilientInformer } from "./informer.js";
export { jsonEqual, mergePatchDiff } from "./merge-patch.js";
export { type ConvertedObjects, convertObjects, formatObjectIssue, type ObjectIssue } from "./objects.js";
export {
  BINDER_KINDS,
  collectionPath,
  FLEET_WATCH_KINDS,
  RESOURCES,
  type ResourceKind,
  type ResourceType,
  TOPOLOGY_WATCH_KINDS,
} from "./resources.js";
export { KubernetesBindingSink, type KubernetesSinkOptions } from "./sink.js";
export { DEFAULT_PROBED_AT_REFRESH_MS } from "./status.js";
export { KubeStore, type KubeStoreOptions, type StoreListener } from "./store.js";
