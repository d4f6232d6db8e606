// Public API of the fleet scheduler (docs/rules/fleet.md): pure placement of ModelDeployment replicas
// onto (cluster, pool). The operator calls placeFleet once per reconcile and applies
// replicaObject(...) for each replica; the `fleet` dry run prints toDryRun(result).

export { parseQuantity, type Quantity } from "../quantity/index.js";
export { clearFleetCaches } from "./caches.js";
export { compileSelector } from "./cel.js";
export {
  API_VERSION,
  CLUSTER_LABEL,
  DEPLOYMENT_LABEL,
  type DryRunOutput,
  type DryRunReplica,
  POOL_LABEL,
  REPLICA_INDEX_LABEL,
  replicaObject,
  toDryRun,
} from "./dry-run.js";
export { FLEET_KINDS, type FleetDocument, type ParsedFleet, parseFleetDocuments } from "./parse.js";
export { placeFleet, replicaName } from "./place.js";
export { tolerates } from "./taints.js";
export type * from "./types.js";
