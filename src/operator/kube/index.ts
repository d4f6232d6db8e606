// Kubernetes wiring of the operator: client calls with explicit patch content types, resilient
// informers, the store (caches + own writes), object conversion and the Kubernetes sink.
export type { BackoffOptions } from "./backoff.js";
export { createKubernetesBinding } from "./binding.js";
export { errorMessage, httpStatus, type JsonPatchOp, type KubeApi, type KubeObject } from "./client.js";
export { kubeConfigForServer, loadKubeConfig } from "./config.js";
export { AGENT_LABEL, ENV_CONTAINERS_ANNOTATION } from "./env.js";
export { LeaderElector } from "./leader.js";
export { isPlainObject, jsonEqual } from "./merge-patch.js";
export { convertObjects } from "./objects.js";
export { FLEET_WATCH_KINDS, RESOURCES, type ResourceKind, TOPOLOGY_WATCH_KINDS } from "./resources.js";
export { KubeStore } from "./store.js";
