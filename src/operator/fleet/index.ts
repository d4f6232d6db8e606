// Fleet placement in the operator (docs/rules/fleet.md, rule 4 of the issue): the pure placement of
// src/fleet applied to a cluster (KubernetesFleet) or to a manifests directory (FileFleet),
// and ModelProviders for replicas that serve, so placed engines feed call-time scheduling.
export {
  DEFAULT_PROVIDER_TYPE,
  type DeploymentStatus,
  type DesiredFleet,
  desiredFleet,
  type FleetCondition,
  type FleetObjects,
  MANAGED_BY_FLEET,
  MANAGED_BY_LABEL,
  type RawObject,
  servingAddress,
} from "./desired.js";
export { type SourceWithExtras, withExtraProviders } from "./extra-providers.js";
export {
  DEPLOYMENTS_FILE,
  FileFleet,
  type FileFleetOptions,
  FLEET_DIR,
  REPLICAS_FILE,
  readFleetObjects,
} from "./files.js";
export { type FleetReconcileReport, KubernetesFleet, type KubernetesFleetOptions } from "./kubernetes.js";
