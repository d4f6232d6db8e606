// The resources the operator reads and writes, and their REST paths.
import { API_GROUP } from "../manifests/index.js";

export const CRD_VERSION = "v1alpha1";

export interface ResourceType {
  kind: string;
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

export const RESOURCES = {
  Model: { kind: "Model", group: API_GROUP, version: CRD_VERSION, plural: "models", namespaced: true },
  ModelProvider: {
    kind: "ModelProvider",
    group: API_GROUP,
    version: CRD_VERSION,
    plural: "modelproviders",
    namespaced: true,
  },
  Agent: { kind: "Agent", group: API_GROUP, version: CRD_VERSION, plural: "agents", namespaced: true },
  CrewSchedulingPolicy: {
    kind: "CrewSchedulingPolicy",
    group: API_GROUP,
    version: CRD_VERSION,
    plural: "crewschedulingpolicies",
    namespaced: true,
  },
  MootArchetype: {
    kind: "MootArchetype",
    group: API_GROUP,
    version: CRD_VERSION,
    plural: "mootarchetypes",
    namespaced: false,
  },
  Deployment: { kind: "Deployment", group: "apps", version: "v1", plural: "deployments", namespaced: true },
  // Fleet placement (docs/rules/fleet.md); watched only when the operator runs with --fleet.
  ModelDeployment: {
    kind: "ModelDeployment",
    group: API_GROUP,
    version: CRD_VERSION,
    plural: "modeldeployments",
    namespaced: true,
  },
  InferenceCluster: {
    kind: "InferenceCluster",
    group: API_GROUP,
    version: CRD_VERSION,
    plural: "inferenceclusters",
    namespaced: false,
  },
  InferenceClass: {
    kind: "InferenceClass",
    group: API_GROUP,
    version: CRD_VERSION,
    plural: "inferenceclasses",
    namespaced: false,
  },
  ModelReplica: {
    kind: "ModelReplica",
    group: API_GROUP,
    version: CRD_VERSION,
    plural: "modelreplicas",
    namespaced: true,
  },
  // Topology sources (docs/rules/topology.md); watched only when the operator runs with --topology.
  TopologySource: {
    kind: "TopologySource",
    group: API_GROUP,
    version: CRD_VERSION,
    plural: "topologysources",
    namespaced: false,
  },
  Node: { kind: "Node", group: "", version: "v1", plural: "nodes", namespaced: false },
  ConfigMap: { kind: "ConfigMap", group: "", version: "v1", plural: "configmaps", namespaced: true },
} as const satisfies Record<string, ResourceType>;

export type ResourceKind = keyof typeof RESOURCES;

/** What the binder watches (the default of a KubeStore). */
export const BINDER_KINDS: readonly ResourceKind[] = [
  "Model",
  "ModelProvider",
  "Agent",
  "CrewSchedulingPolicy",
  "MootArchetype",
  "Deployment",
];

/** What the TopologySource controller watches (Secrets are read on demand, never cached). */
export const TOPOLOGY_WATCH_KINDS: readonly ResourceKind[] = ["TopologySource", "Node", "ConfigMap"];

/** What fleet placement watches: its inputs, and the ModelProviders it writes. */
export const FLEET_WATCH_KINDS: readonly ResourceKind[] = [
  "ModelDeployment",
  "InferenceCluster",
  "InferenceClass",
  "ModelReplica",
  "ModelProvider",
];

export function apiVersionOf(r: ResourceType): string {
  return r.group === "" ? r.version : `${r.group}/${r.version}`;
}

/** The collection path: all namespaces (or cluster scope) without `namespace`. */
export function collectionPath(r: ResourceType, namespace?: string): string {
  const base = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  return r.namespaced && namespace !== undefined
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.plural}`
    : `${base}/${r.plural}`;
}
