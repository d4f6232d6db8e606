// The `topology` dry run (docs/rules/topology.md "`topology` dry run"): sources → profiles →
// capacity → admission of every gang, in key order, each admitted gang's pods taken from the
// capacity the next one sees. Pure: the caller passes parsed manifests and the time.
import { admitGang, topologyName } from "./admit.js";
import { buildCapacity, type Capacity, cmp, reserve } from "./capacity.js";
import { engineGangs, nodeFree, type PodGang, podGangs } from "./gangs.js";
import { admitJointly } from "./joint.js";
import type { DeploymentManifest, TopologyManifests } from "./manifest-types.js";
import { deriveProfiles, detectDrift, type Profiles } from "./profiles.js";
import { evaluateSource, type SourceStatus } from "./sources.js";
import type { Labels, NodeState, TopologyAssignment } from "./types.js";

export interface GangOutcome {
  admitted: boolean;
  profile?: string;
  assignment?: TopologyAssignment;
  message: string;
}

export interface TopologyPlan {
  sources: SourceStatus[];
  profiles: Profiles;
  nodes: NodeState[];
  /** Capacity before any gang is admitted. */
  capacity: Capacity;
  gangs: Map<string, GangOutcome>;
  podGangs: PodGang[];
  deployments: DeploymentManifest[];
  /** Profiles whose existing Kueue Topology lists other levels. */
  drift: string[];
}

export interface DryRunOutput {
  sources: Record<string, { ready: boolean; reason: string; message: string }>;
  nodes: Record<string, { levels: string[]; profile: string }>;
  gangs: Record<string, { admitted: boolean; assignment?: TopologyAssignment; message: string }>;
}

export function planTopology(
  m: TopologyManifests,
  now: number,
  webhookBodies?: ReadonlyMap<string, unknown>,
): TopologyPlan {
  const nodeLabels = new Map<string, Labels>(m.nodes.map((n) => [n.name, n.labels]));
  const sources = m.sources.map((s) =>
    evaluateSource(s, {
      nodes: nodeLabels,
      configMaps: m.configMaps,
      ...(webhookBodies ? { webhookBodies } : {}),
    }),
  );
  const profiles = deriveProfiles(nodeLabels, sources);
  const free = nodeFree(m.nodes, m.pods);
  const nodes: NodeState[] = m.nodes.map((n) => ({
    name: n.name,
    labels: profiles.nodes.get(n.name)!.labels,
    ready: n.ready,
    unschedulable: n.unschedulable,
    taints: n.taints,
    free: free.get(n.name) ?? {},
  }));
  const capacity = buildCapacity(nodes, profiles.nodes);
  const existing = new Map<string, string[]>();
  for (const id of profiles.profiles.keys()) {
    const levels = m.kueueTopologies.get(topologyName(id));
    if (levels) existing.set(id, levels);
  }
  const drift = detectDrift(existing, profiles.profiles);

  const pg = podGangs(m.pods);
  type Item = { key: string; run: (cap: Capacity) => Capacity };
  const gangs = new Map<string, GangOutcome>();
  const items: Item[] = pg.map((g) => ({
    key: g.key,
    run: (cap) => {
      const a = admitGang(g, cap);
      if (!a.admitted) {
        gangs.set(g.key, { admitted: false, message: a.message });
        return cap;
      }
      gangs.set(g.key, { admitted: true, profile: a.profile, assignment: a.assignment, message: a.message });
      return reserve(cap, a.takes, g.requests);
    },
  }));
  for (const d of m.deployments) {
    if (d.engines.length === 0) continue;
    for (let i = 0; i < d.replicas; i++) {
      items.push({
        key: `${d.namespace}/${d.name}-${i}`,
        run: (cap) => {
          const set = {
            key: `${d.namespace}/${d.name}-${i}`,
            gangs: engineGangs(d, i),
            ...(d.createdAt !== undefined ? { since: d.createdAt } : {}),
          };
          const r = admitJointly(set, cap, now);
          for (const [key, g] of r.gangs) {
            gangs.set(key, {
              admitted: g.admitted,
              ...(g.profile ? { profile: g.profile } : {}),
              ...(g.assignment ? { assignment: g.assignment } : {}),
              message: g.message,
            });
          }
          return r.capacity;
        },
      });
    }
  }
  let cap = capacity;
  for (const item of items.sort((a, b) => cmp(a.key, b.key))) cap = item.run(cap);
  return { sources, profiles, nodes, capacity, gangs, podGangs: pg, deployments: m.deployments, drift };
}

export function toDryRun(plan: TopologyPlan): DryRunOutput {
  const out: DryRunOutput = { sources: {}, nodes: {}, gangs: {} };
  for (const s of plan.sources)
    out.sources[s.name] = { ready: s.ready, reason: s.reason, message: s.message };
  for (const [name, p] of [...plan.profiles.nodes].sort(([a], [b]) => cmp(a, b))) {
    out.nodes[name] = { levels: p.levels, profile: p.profile };
  }
  for (const key of [...plan.gangs.keys()].sort(cmp)) {
    const g = plan.gangs.get(key)!;
    out.gangs[key] = {
      admitted: g.admitted,
      ...(g.assignment ? { assignment: g.assignment } : {}),
      message: g.message,
    };
  }
  return out;
}
