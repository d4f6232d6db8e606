// Public API of topology-aware admission (docs/rules/topology.md): pure functions from sources,
// Nodes and gangs to profiles, capacity trees and admission decisions. The operator's source
// controllers call validateSnapshot; the `topology` CLI calls parse → planTopology → toDryRun
// or toKueue.
export { admitGang, type GangAdmission, topologyName } from "./admit.js";
export {
  buildCapacity,
  type Capacity,
  type ProfileRef,
  type ProfileTree,
  podsThatFit,
  reserve,
} from "./capacity.js";
export { type DryRunOutput, type GangOutcome, planTopology, type TopologyPlan, toDryRun } from "./dry-run.js";
export { type Flavor, type FlavorPlan, HARDWARE_LABEL, MAX_FLAVORS, planFlavors } from "./flavors.js";
export { conflictingParent, missingParent, type TreeProblem, treeProblem } from "./hierarchy.js";
export {
  admitJointly,
  type GangSet,
  type JointGangResult,
  type JointResult,
  type JointState,
  PARK_AFTER_MS,
} from "./joint.js";
export { KUEUE_API, type KueueEmit, type KueueObject, QUEUE_NAME, toKueue } from "./kueue.js";
export {
  fnv1a64,
  HOSTNAME,
  normalizeLevels,
  PROFILE_LABEL,
  profileId,
  REGION,
  SNAPSHOT_API_VERSION,
  ZONE,
} from "./levels.js";
export {
  GPU_RESOURCE,
  type NodeManifest,
  POD_GROUP_LABEL,
  POD_GROUP_TOTAL,
  PREFERRED_TOPOLOGY,
  QUEUE_NAME_LABEL,
  REQUIRED_TOPOLOGY,
  type TopologyManifests,
} from "./manifest-types.js";
export { parseTopologyManifests } from "./manifests.js";
export { deriveProfiles, detectDrift, type NodeProfile, type Profiles } from "./profiles.js";
export { formatQuantity, parseQuantity } from "./quantity.js";
export { mayPublish, type SnapshotRejection, type SnapshotResult, validateSnapshot } from "./snapshot.js";
export { evaluateSource, lastValidInForce, type SourceInputs, type SourceStatus } from "./sources.js";
export type * from "./types.js";
export {
  MAX_TERM_HOSTNAMES,
  type NodeModelStore,
  type PreferredTerm,
  preferredHostnames,
  weightsAffinity,
} from "./weights.js";
