// The deployment's ReplicasScheduled condition (docs/rules/fleet.md rule 8).
import type { Condition } from "./types.js";

export interface ConditionInput {
  wanted: number;
  scheduled: number;
  /** Clusters whose labels match the deployment's clusterSelector. */
  matchingClusters: number;
  errors: readonly string[];
  fill: boolean;
}

export function conditionFor(i: ConditionInput): Condition {
  const base = { type: "ReplicasScheduled" as const };
  if (i.errors.length > 0) {
    const more = i.errors.length > 1 ? ` (and ${i.errors.length - 1} more)` : "";
    return { ...base, status: "False", reason: "InvalidNodeSelector", message: `${i.errors[0]}${more}` };
  }
  const counted = `${i.scheduled} of ${i.wanted} replicas scheduled`;
  if (i.scheduled >= i.wanted) {
    return { ...base, status: "True", reason: "ReplicasScheduled", message: counted };
  }
  if (i.matchingClusters === 0) {
    return {
      ...base,
      status: "False",
      reason: "NoClusters",
      message: `no InferenceCluster matches the clusterSelector (${counted})`,
    };
  }
  if (!i.fill) {
    return { ...base, status: "False", reason: "FillDisabled", message: `${counted} (fill disabled)` };
  }
  return {
    ...base,
    status: "False",
    reason: "InsufficientCapacity",
    message: `${counted} (checked ${i.matchingClusters} clusters)`,
  };
}
