// Retain and scale down (docs/rules/fleet.md rule 6): which of a deployment's observed replicas stay.
// Retention never looks at room: an existing replica's pods are already running (or waiting).
import { memberPods, recordedClaim } from "./ledger.js";
import { claims } from "./match.js";
import { type ClusterView, memberMatch, sameFabric } from "./pools.js";
import { untolerated } from "./taints.js";
import type { ModelDeployment, ModelReplica } from "./types.js";

export function matchesSelector(labels: Record<string, string>, selector: Record<string, string>): boolean {
  for (const k in selector) if (labels[k] !== selector[k]) return false;
  return true;
}

/** Why a replica cannot stay, or undefined when it stays. */
export function dropReason(
  d: ModelDeployment,
  r: ModelReplica,
  clusters: ReadonlyMap<string, ClusterView>,
): string | undefined {
  const view = clusters.get(r.clusterName);
  if (!view) return "cluster deleted";
  if (!matchesSelector(view.cluster.labels, d.clusterSelector)) return "cluster no longer matches";
  if (untolerated(view.cluster.taints, d.tolerations, ["NoExecute"]).length > 0) return "NoExecute taint";
  if (r.engines.length !== d.engines.length) return "engines changed";
  for (const engine of d.engines) {
    const recorded = r.engines.find((e) => e.name === engine.name);
    if (!recorded || recorded.copies !== engine.copies) return `engine ${engine.name} changed`;
    if (recorded.members.length !== engine.members.length) return `engine ${engine.name} members changed`;
    let claiming = false;
    const first = view.poolByName.get(recorded.members[0]!.nodePoolName);
    for (const [j, member] of engine.members.entries()) {
      const rm = recorded.members[j]!;
      if (rm.role !== member.role) return `engine ${engine.name} roles changed`;
      if (memberPods(rm.role, rm.workerNodes) !== memberPods(member.role, member.workerNodes)) {
        return `engine ${engine.name} worker nodes changed`;
      }
      const pool = view.poolByName.get(rm.nodePoolName);
      if (!pool) return `pool ${rm.nodePoolName} deleted`;
      if (first && !sameFabric(first, pool)) return `engine ${engine.name} spans fabrics`;
      const m = memberMatch(member, pool);
      if (!m) return `pool ${rm.nodePoolName} no longer matches`;
      // The ledger charges what was recorded: a pod that would now claim something else is a
      // new shape, placed afresh rather than silently charged wrong.
      if (!sameClaim(m.claim, recordedClaim(rm, pool))) return `engine ${engine.name} claims changed`;
      claiming ||= claims(m);
    }
    if (!claiming) return `engine ${engine.name} has no claiming member`;
  }
  return undefined;
}

function sameClaim(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if ((a[k] ?? 0) !== (b[k] ?? 0)) return false;
  return true;
}

/**
 * The replicas that stay: ours ordered by name, the first of each identity (cluster, index),
 * those still valid, then scale-down to `d.replicas` by highest (cluster load, cluster, index),
 * where a cluster's load is how many of the deployment's replicas it still hosts.
 */
export function retain(
  d: ModelDeployment,
  ours: readonly ModelReplica[],
  clusters: ReadonlyMap<string, ClusterView>,
): ModelReplica[] {
  const seen = new Set<string>();
  const kept: ModelReplica[] = [];
  for (const r of ours) {
    const identity = `${r.clusterName}\u0000${r.index}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    if (dropReason(d, r, clusters) === undefined) kept.push(r);
  }
  while (kept.length > d.replicas) {
    const load = new Map<string, number>();
    for (const r of kept) load.set(r.clusterName, (load.get(r.clusterName) ?? 0) + 1);
    let worst = 0;
    for (let i = 1; i < kept.length; i++) {
      if (compareForDrop(kept[i]!, kept[worst]!, load) > 0) worst = i;
    }
    kept.splice(worst, 1);
  }
  return kept;
}

function compareForDrop(a: ModelReplica, b: ModelReplica, load: ReadonlyMap<string, number>): number {
  const la = load.get(a.clusterName)!;
  const lb = load.get(b.clusterName)!;
  if (la !== lb) return la - lb;
  if (a.clusterName !== b.clusterName) return a.clusterName < b.clusterName ? -1 : 1;
  return a.index - b.index;
}
