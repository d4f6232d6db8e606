// Public API of the fleet scheduler (docs/rules/fleet.md): pure placement of ModelDeployment replicas
// onto (cluster, pool). The operator calls placeFleet once per reconcile and applies
// replicaObject(...) for each replica; the `fleet` dry run prints toDryRun(result).

export { clearFleetCaches } from "./caches.js";
export {
  CLUSTER_LABEL,
  DEPLOYMENT_LABEL,
  type DryRunOutput,
  REPLICA_INDEX_LABEL,
  replicaObject,
  toDryRun,
} from "./dry-run.js";
export { parseFleetDocuments } from "./parse.js";
export { placeFleet, replicaName } from "./place.js";
export type {
  Device,
  FleetInput,
  FleetResult,
  FreeDevicesBucket,
  GpuPool,
  InferenceCluster,
  Member,
  ModelDeployment,
  ModelReplica,
} from "./types.js";
