// `--emit kueue`: what a cluster running Kueue (with Topology-Aware Scheduling) needs to enforce
// the same admission the dry run computes. One Topology per profile; one ResourceFlavor per
// hardware identity × profile, pinned to the profile label and referencing its Topology; one
// ClusterQueue whose single resource group lists every flavor; a LocalQueue per namespace with
// gangs; NFD NodeFeatures that put the profile (and writing sources' level values) on the
// Nodes the flavors select; and the gangs' Pods, queued and carrying their group annotations.
import { SYSTEM_NAMESPACE } from "../binding/index.js";
import { topologyName } from "./admit.js";
import { cmp } from "./capacity.js";
import type { TopologyPlan } from "./dry-run.js";
import { type Flavor, HARDWARE_LABEL, planFlavors } from "./flavors.js";
import { PROFILE_LABEL, READ_ONLY_PARENTS } from "./levels.js";
import {
  type NodeManifest,
  POD_GROUP_LABEL,
  POD_GROUP_TOTAL,
  QUEUE_NAME_LABEL,
  REQUIRED_TOPOLOGY,
} from "./manifest-types.js";
import { formatQuantity } from "./quantity.js";

export const KUEUE_API = "kueue.x-k8s.io/v1beta1";
export const NFD_API = "nfd.k8s-sigs.io/v1alpha1";
export const QUEUE_NAME = "kubemoot";
const MANAGED_BY = { "app.kubernetes.io/managed-by": "kubemoot-scheduler" };
/** Resources every queue covers, besides those the gangs request. */
const BASE_RESOURCES = ["cpu", "memory", "pods"];

export type KueueObject = Record<string, unknown> & { apiVersion: string; kind: string };

export type KueueEmit =
  | { ok: true; objects: KueueObject[]; notes: string[] }
  | { ok: false; reason: string; message: string };

export function toKueue(plan: TopologyPlan, nodes: readonly NodeManifest[]): KueueEmit {
  if (plan.drift.length > 0) return { ok: false, reason: "ProfileDrift", message: plan.drift.join("; ") };
  const identity = new Map<string, { profile: string; hardware?: string }>();
  for (const n of nodes) {
    const p = plan.profiles.nodes.get(n.name)!;
    const hardware = n.labels[HARDWARE_LABEL];
    identity.set(n.name, { profile: p.profile, ...(hardware !== undefined ? { hardware } : {}) });
  }
  const flavors = planFlavors(identity);
  if (!flavors.ok) return { ok: false, reason: flavors.reason, message: flavors.message };

  const objects: KueueObject[] = [];
  for (const [id, levels] of plan.profiles.profiles) {
    objects.push({
      apiVersion: KUEUE_API,
      kind: "Topology",
      metadata: { name: topologyName(id), labels: { ...MANAGED_BY } },
      spec: { levels: levels.map((nodeLabel) => ({ nodeLabel })) },
    });
  }
  for (const f of flavors.flavors) {
    objects.push({
      apiVersion: KUEUE_API,
      kind: "ResourceFlavor",
      metadata: { name: f.name, labels: { ...MANAGED_BY } },
      spec: { nodeLabels: f.nodeLabels, topologyName: topologyName(f.profile) },
    });
  }
  objects.push(clusterQueue(plan, flavors.flavors, nodes));
  const namespaces = new Set<string>([
    ...plan.podGangs.map((g) => g.key.slice(0, g.key.indexOf("/"))),
    ...plan.deployments.filter((d) => d.engines.length > 0).map((d) => d.namespace),
  ]);
  for (const ns of [...namespaces].sort(cmp)) {
    objects.push({
      apiVersion: KUEUE_API,
      kind: "LocalQueue",
      metadata: { namespace: ns, name: QUEUE_NAME, labels: { ...MANAGED_BY } },
      spec: { clusterQueue: QUEUE_NAME },
    });
  }
  for (const n of nodes) {
    const p = plan.profiles.nodes.get(n.name)!;
    // Read-only parents already sit on the Node; everything else a source gave is projected.
    const labels: Record<string, string> = { [PROFILE_LABEL]: p.profile };
    for (const level of p.levels) {
      const v = p.labels[level];
      if (v !== undefined && n.labels[level] !== v && !READ_ONLY_PARENTS.includes(level)) labels[level] = v;
    }
    objects.push({
      apiVersion: NFD_API,
      kind: "NodeFeature",
      metadata: {
        namespace: SYSTEM_NAMESPACE,
        name: `kubemoot-topology-${n.name}`,
        labels: { ...MANAGED_BY, "nfd.node.kubernetes.io/node-name": n.name },
      },
      spec: { labels },
    });
  }
  for (const g of plan.podGangs) {
    for (const pod of g.pods) {
      const raw = structuredClone(pod.raw) as { metadata: Record<string, unknown> } & Record<string, unknown>;
      delete raw.status;
      for (const k of ["uid", "resourceVersion", "creationTimestamp", "managedFields"])
        delete raw.metadata[k];
      raw.metadata.labels = {
        ...pod.labels,
        [QUEUE_NAME_LABEL]: QUEUE_NAME,
        [POD_GROUP_LABEL]: pod.labels[POD_GROUP_LABEL],
      };
      raw.metadata.annotations = { ...pod.annotations, [POD_GROUP_TOTAL]: String(g.size) };
      objects.push(raw as unknown as KueueObject);
    }
  }
  const notes: string[] = [];
  for (const d of plan.deployments) {
    for (const e of d.engines) {
      notes.push(
        `ModelDeployment ${d.namespace}/${d.name} engine ${e.name}: each replica's ${e.size} engine pod(s) ` +
          `carry ${REQUIRED_TOPOLOGY}: ${e.requiredLevel}, ${POD_GROUP_LABEL}: ${d.name}-<replica>-${e.name}, ` +
          `${POD_GROUP_TOTAL}: "${e.size}" and ${QUEUE_NAME_LABEL}: ${QUEUE_NAME}`,
      );
    }
  }
  return { ok: true, objects, notes };
}

function clusterQueue(
  plan: TopologyPlan,
  flavors: readonly Flavor[],
  nodes: readonly NodeManifest[],
): KueueObject {
  const covered = new Set(BASE_RESOURCES);
  for (const g of plan.podGangs) for (const k of Object.keys(g.requests)) covered.add(k);
  for (const d of plan.deployments)
    for (const e of d.engines) for (const k of Object.keys(e.requests)) covered.add(k);
  const resources = [...covered].sort(cmp);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  return {
    apiVersion: KUEUE_API,
    kind: "ClusterQueue",
    metadata: { name: QUEUE_NAME, labels: { ...MANAGED_BY } },
    spec: {
      namespaceSelector: {},
      resourceGroups: [
        {
          coveredResources: resources,
          flavors: flavors.map((f) => ({
            name: f.name,
            resources: resources.map((r) => {
              let milli = 0;
              for (const n of f.nodes) milli += byName.get(n)?.allocatable[r] ?? 0;
              return { name: r, nominalQuota: formatQuantity(milli) };
            }),
          })),
        },
      ],
    },
  };
}
