// The `fleet` dry run's JSON (docs/rules/fleet.md "`fleet` dry run"), and the ModelReplica object
// the operator writes for a placed replica (every member pinned to its pool by node label).
import type { Condition, FleetResult, PlacedReplica } from "./types.js";

export const API_VERSION = "kubemoot.ai/v1alpha1";
export const DEPLOYMENT_LABEL = "kubemoot.ai/deployment";
export const CLUSTER_LABEL = "kubemoot.ai/cluster";
export const REPLICA_INDEX_LABEL = "kubemoot.ai/replica-index";
export const POOL_LABEL = "kubemoot.ai/pool";

export interface DryRunDeviceRequest {
  name: string;
  deviceClassName: string;
  count: number;
  selectors: string[];
}

export interface DryRunReplica {
  cluster: string;
  index: number;
  gateway: string | null;
  engines: {
    name: string;
    members: { role: string; pool: string; deviceRequests: DryRunDeviceRequest[] }[];
  }[];
}

export interface DryRunOutput {
  deployments: Record<string, { replicas: DryRunReplica[]; conditions: Condition[] }>;
}

export function toDryRun(result: FleetResult): DryRunOutput {
  const deployments: DryRunOutput["deployments"] = {};
  for (const d of result.deployments) {
    deployments[`${d.namespace}/${d.name}`] = {
      replicas: d.replicas.map((r) => ({
        cluster: r.clusterName,
        index: r.index,
        gateway: r.gateway,
        engines: r.engines.map((e) => ({
          name: e.name,
          members: e.members.map((m) => ({
            role: m.role,
            pool: m.nodePoolName,
            deviceRequests: m.deviceRequests.map((q) => ({
              name: q.name,
              deviceClassName: q.deviceClassName,
              count: q.count,
              selectors: [...q.selectors],
            })),
          })),
        })),
      })),
      conditions: d.conditions.map((c) => ({ ...c })),
    };
  }
  return { deployments };
}

/** The ModelReplica object to apply for a placed replica. */
export function replicaObject(r: PlacedReplica): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: "ModelReplica",
    metadata: {
      namespace: r.namespace,
      name: r.name,
      labels: {
        ...(r.deployment ? { [DEPLOYMENT_LABEL]: r.deployment } : {}),
        [CLUSTER_LABEL]: r.clusterName,
        [REPLICA_INDEX_LABEL]: String(r.index),
      },
    },
    spec: {
      clusterName: r.clusterName,
      engines: r.engines.map((e) => ({
        name: e.name,
        copies: e.copies,
        members: e.members.map((m) => ({
          role: m.role,
          ...(m.workerNodes !== undefined ? { worker: { nodes: m.workerNodes } } : {}),
          nodePoolName: m.nodePoolName,
          // The cluster's own scheduler may only use the pool the ledger charged.
          nodeSelector: { [POOL_LABEL]: m.nodePoolName },
          deviceRequests: m.deviceRequests.map((q) => ({
            ...q,
            selectors: q.selectors.map((cel) => ({ cel })),
          })),
        })),
      })),
    },
  };
}
