// What the FAKE API server serves (see server.ts): the resource table, the API paths that
// reach a resource, and label selectors on lists.
import type { Json } from "./patch.js";

export type Obj = Record<string, Json> & { metadata: Record<string, Json> };

export interface ResourceDef {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  /** The status subresource is enabled (status only changes through /status). */
  statusSubresource: boolean;
}

const KUBEMOOT = "kubemoot.ai";
export const FAKE_RESOURCES: ResourceDef[] = [
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "models",
    kind: "Model",
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "modelproviders",
    kind: "ModelProvider",
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "agents",
    kind: "Agent",
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "crewschedulingpolicies",
    kind: "CrewSchedulingPolicy",
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "mootarchetypes",
    kind: "MootArchetype",
    namespaced: false,
    statusSubresource: true,
  },
  {
    group: "apps",
    version: "v1",
    plural: "deployments",
    kind: "Deployment",
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "modeldeployments",
    kind: "ModelDeployment",
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "inferenceclusters",
    kind: "InferenceCluster",
    namespaced: false,
    statusSubresource: true,
  },
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "inferenceclasses",
    kind: "InferenceClass",
    namespaced: false,
    statusSubresource: true,
  },
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "modelreplicas",
    kind: "ModelReplica",
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: KUBEMOOT,
    version: "v1alpha1",
    plural: "topologysources",
    kind: "TopologySource",
    namespaced: false,
    statusSubresource: true,
  },
  { group: "", version: "v1", plural: "nodes", kind: "Node", namespaced: false, statusSubresource: true },
  {
    group: "",
    version: "v1",
    plural: "configmaps",
    kind: "ConfigMap",
    namespaced: true,
    statusSubresource: false,
  },
  { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true, statusSubresource: false },
  {
    group: "coordination.k8s.io",
    version: "v1",
    plural: "leases",
    kind: "Lease",
    namespaced: true,
    statusSubresource: false,
  },
  { group: "", version: "v1", plural: "events", kind: "Event", namespaced: true, statusSubresource: false },
  {
    group: "events.k8s.io",
    version: "v1",
    plural: "events",
    kind: "Event",
    namespaced: true,
    statusSubresource: false,
  },
];

export const defKey = (d: ResourceDef) => `${d.group}/${d.version}/${d.plural}`;

export function apiVersion(d: ResourceDef): string {
  return d.group === "" ? d.version : `${d.group}/${d.version}`;
}

/** The resource, namespace, name and subresource a path names; undefined when not served. */
export function routeOf(
  pathname: string,
):
  | { def: ResourceDef; namespace: string | undefined; name: string | undefined; sub: string | undefined }
  | undefined {
  const seg = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (seg[0] === "api") {
    group = "";
    version = seg[1] ?? "";
    rest = seg.slice(2);
  } else if (seg[0] === "apis") {
    group = seg[1] ?? "";
    version = seg[2] ?? "";
    rest = seg.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, sub, ...extra] = rest;
  if (extra.length > 0 || plural === undefined) return undefined;
  const def = FAKE_RESOURCES.find((d) => d.group === group && d.version === version && d.plural === plural);
  if (!def) return undefined;
  if (!def.namespaced && namespace !== undefined) return undefined;
  if (def.namespaced && name !== undefined && namespace === undefined) return undefined;
  if (sub !== undefined && sub !== "status") return undefined;
  return { def, namespace, name, sub };
}

/** Equality-only label selectors (`a=b,c`), enough for the tests. */
export function matchesSelector(o: Obj, selector: string | undefined): boolean {
  if (!selector) return true;
  const labels = (o.metadata.labels ?? {}) as Record<string, string>;
  return selector.split(",").every((term) => {
    const [k, v] = term.split("=");
    if (k === undefined) return true;
    return v === undefined ? k in labels : labels[k] === v;
  });
}
