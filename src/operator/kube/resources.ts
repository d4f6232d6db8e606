// The resources the operator reads and writes, and their REST paths.
import { API_GROUP } from "../manifests/kinds.js";

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
} as const satisfies Record<string, ResourceType>;

export type ResourceKind = keyof typeof RESOURCES;

export const RESOURCE_KINDS = Object.keys(RESOURCES) as ResourceKind[];

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
