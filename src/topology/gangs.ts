// From what the manifests hold to what the planner admits: gangs of unbound Pods sharing a
// Kueue pod group, engine gangs of a ModelDeployment's replicas, and each Node's free resources.
import { cmp } from "./capacity.js";
import {
  type DeploymentManifest,
  type NodeManifest,
  POD_GROUP_LABEL,
  POD_GROUP_TOTAL,
  type PodManifest,
  PREFERRED_TOPOLOGY,
  REQUIRED_TOPOLOGY,
} from "./manifest-types.js";
import type { Gang, Resources, TopologyRequest } from "./types.js";

/** A gang of Pods sharing a Kueue pod group (unbound pods only; bound ones use capacity). */
export interface PodGang extends Gang {
  pods: PodManifest[];
}

/** Gangs from Kueue pod groups, by `<ns>/<group>`. */
export function podGangs(pods: readonly PodManifest[]): PodGang[] {
  const groups = new Map<string, PodManifest[]>();
  for (const p of pods) {
    const group = p.labels[POD_GROUP_LABEL];
    if (group === undefined || p.nodeName !== undefined || isFinished(p)) continue;
    const key = `${p.namespace}/${group}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => cmp(a, b))
    .map(([key, members]) => {
      members.sort((a, b) => cmp(a.name, b.name));
      const first = members[0]!;
      const total = first.annotations[POD_GROUP_TOTAL];
      // One PodSet per group: each resource at the most any member asks for.
      const requests: Record<string, number> = {};
      for (const p of members)
        for (const [k, v] of Object.entries(p.requests)) requests[k] = Math.max(requests[k] ?? 0, v);
      const required = first.annotations[REQUIRED_TOPOLOGY];
      const preferred = first.annotations[PREFERRED_TOPOLOGY];
      const topology: TopologyRequest =
        required !== undefined
          ? { mode: "required", level: required }
          : preferred !== undefined
            ? { mode: "preferred", level: preferred }
            : { mode: "unconstrained" };
      return {
        key,
        size: total !== undefined && /^[1-9]\d*$/.test(total) ? Number(total) : members.length,
        requests,
        topology,
        tolerations: first.tolerations,
        pods: members,
      };
    });
}

export function isFinished(p: PodManifest): boolean {
  return p.phase === "Succeeded" || p.phase === "Failed";
}

/** Engine gangs of one replica: `<ns>/<deployment>-<index>-<engine>`. */
export function engineGangs(d: DeploymentManifest, index: number): Gang[] {
  return d.engines.map((e) => ({
    key: `${d.namespace}/${d.name}-${index}-${e.name}`,
    size: e.size,
    requests: e.requests,
    topology: { mode: "required", level: e.requiredLevel },
    tolerations: d.tolerations,
  }));
}

/** Node free resources: allocatable minus what bound, unfinished pods request. */
export function nodeFree(
  nodes: readonly NodeManifest[],
  pods: readonly PodManifest[],
): Map<string, Resources> {
  const free = new Map<string, Record<string, number>>();
  for (const n of nodes) free.set(n.name, { ...n.allocatable });
  for (const p of pods) {
    if (p.nodeName === undefined || isFinished(p)) continue;
    const f = free.get(p.nodeName);
    if (!f) continue;
    for (const [k, v] of Object.entries(p.requests)) f[k] = (f[k] ?? 0) - v;
  }
  return free;
}
