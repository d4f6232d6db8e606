// placeFleet: one pure pass over observed state (docs/rules/fleet.md). Every deployment is retained
// and scaled down first; the ledger then charges all replicas that stay (ours, other
// deployments', and those of deployments not given); finally deployments fill in name order,
// each seeing what the ones before it placed. Inputs are sorted here, so the result never
// depends on the order they came in.

import type { PoolCapacity } from "./capacity.js";
import { conditionFor } from "./conditions.js";
import {
  type EngineMatches,
  engineClaims,
  engineMatches,
  type MemberPlacement,
  placeEngine,
  type WorkingPools,
} from "./engine.js";
import { Ledger } from "./ledger.js";
import type { MemberMatch } from "./match.js";
import { type ClusterView, clusterView, memberMatch, type PoolView } from "./pools.js";
import { matchesSelector, retain } from "./retain.js";
import { selectorErrors } from "./selectors.js";
import { untolerated } from "./taints.js";
import type {
  DeploymentPlacement,
  FleetInput,
  FleetOptions,
  FleetResult,
  InferenceClass,
  Member,
  ModelDeployment,
  ModelReplica,
  PlacedReplica,
  ReplicaEngine,
} from "./types.js";

const byName =
  <T>(key: (t: T) => string) =>
  (a: T, b: T) => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
const objectKey = (o: { namespace: string; name: string }) => `${o.namespace}/${o.name}`;

/** First of each key, in sorted order. */
/**
 * First of each key in sorted order. Two objects of one name cannot exist in a real cluster;
 * should they come in anyway, their content breaks the tie so input order never decides.
 */
function uniqueSorted<T>(items: readonly T[], key: (t: T) => string): T[] {
  const byKey = byName(key);
  const sorted = [...items].sort((a, b) => byKey(a, b) || byName<T>((t) => JSON.stringify(t))(a, b));
  const seen = new Set<string>();
  return sorted.filter((t) => !seen.has(key(t)) && seen.add(key(t)) !== undefined);
}

export function placeFleet(input: FleetInput, options: FleetOptions = {}): FleetResult {
  const fill = options.fill ?? true;
  const classes = new Map<string, InferenceClass>();
  for (const c of uniqueSorted(input.classes ?? [], (c) => c.name)) classes.set(c.name, c);
  const clusters = new Map<string, ClusterView>();
  for (const c of uniqueSorted(input.clusters, (c) => c.name)) clusters.set(c.name, clusterView(c, classes));
  const deployments = uniqueSorted(input.deployments, objectKey);
  // Replicas by name; a second object of one name (impossible in a real cluster) is ignored.
  const replicas = uniqueSorted(input.replicas, objectKey);

  const owned = new Map<string, ModelReplica[]>();
  for (const d of deployments) owned.set(objectKey(d), []);
  const foreign: ModelReplica[] = [];
  for (const r of replicas) {
    const list = r.deployment === undefined ? undefined : owned.get(`${r.namespace}/${r.deployment}`);
    if (list) list.push(r);
    else foreign.push(r);
  }

  // Phase 1: retain and scale down every deployment (independent of room).
  const plans = deployments.map((d) => {
    const errors = selectorErrors(d);
    const ours = owned.get(objectKey(d))!;
    // A deployment whose selectors do not compile keeps what runs, untouched, until fixed.
    const kept = errors.length > 0 ? ours : retain(d, ours, clusters);
    return { d, errors, kept };
  });

  // Phase 2: the ledger, charged in replica-name order.
  const ledger = new Ledger(clusters);
  const stay = [...foreign, ...plans.flatMap((p) => p.kept)].sort(byName(objectKey));
  for (const r of stay) ledger.chargeRecorded(r);

  // Phase 3: fill, deployment by deployment.
  const out: DeploymentPlacement[] = plans.map(({ d, errors, kept }) => {
    const matching = [...clusters.values()].filter((v) =>
      matchesSelector(v.cluster.labels, d.clusterSelector),
    );
    const placed: PlacedReplica[] = kept.map((r) =>
      errors.length > 0 ? emitRecorded(r, clusters) : emitRetained(d, r, clusters),
    );
    if (fill && errors.length === 0) fillDeployment(d, matching, placed, ledger);
    placed.sort((a, b) =>
      a.clusterName !== b.clusterName ? (a.clusterName < b.clusterName ? -1 : 1) : a.index - b.index,
    );
    const condition = conditionFor({
      wanted: d.replicas,
      scheduled: placed.length,
      matchingClusters: matching.length,
      errors,
      fill,
    });
    return { namespace: d.namespace, name: d.name, replicas: placed, conditions: [condition], errors };
  });
  return { deployments: out };
}

interface Candidate {
  view: ClusterView;
  /** Per engine, the usable matches on this cluster (built when first tried). */
  tables: EngineMatches[] | undefined;
  hosted: number;
}

function fillDeployment(
  d: ModelDeployment,
  matching: readonly ClusterView[],
  placed: PlacedReplica[],
  ledger: Ledger,
): void {
  const hosted = new Map<string, number>();
  for (const r of placed) hosted.set(r.clusterName, (hosted.get(r.clusterName) ?? 0) + 1);
  const candidates: Candidate[] = [];
  for (const view of matching) {
    if (!reachableAndTolerated(d, view)) continue;
    // A cluster where some engine has no member that can claim anywhere is not eligible.
    if (!d.engines.every((e) => engineClaims(e, view))) continue;
    candidates.push({ view, tables: undefined, hosted: hosted.get(view.cluster.name) ?? 0 });
  }
  const used = new Set(placed.map((r) => r.index));
  let nextIndex = 0;
  while (placed.length < d.replicas && candidates.length > 0) {
    // Spread before packing: the cluster hosting the fewest of ours, then by name.
    let best = 0;
    for (let i = 1; i < candidates.length; i++) {
      const a = candidates[i]!;
      const b = candidates[best]!;
      if (a.hosted < b.hosted || (a.hosted === b.hosted && a.view.cluster.name < b.view.cluster.name))
        best = i;
    }
    const c = candidates[best]!;
    const engines = placeReplica(d, c, ledger);
    if (!engines) {
      // Room only shrinks and every replica of a deployment has the same shape: a cluster
      // that cannot host one now cannot host a later one either.
      candidates.splice(best, 1);
      continue;
    }
    while (used.has(nextIndex)) nextIndex++;
    const replica = newReplica(d, c.view, nextIndex, engines);
    used.add(nextIndex);
    c.hosted++;
    placed.push(replica);
  }
}

/** Ready, with a gateway, and no untolerated NoSchedule or NoExecute taint. */
function reachableAndTolerated(d: ModelDeployment, view: ClusterView): boolean {
  const c = view.cluster;
  if (!c.ready || !c.gatewayAddress) return false;
  return untolerated(c.taints, d.tolerations, ["NoSchedule", "NoExecute"]).length === 0;
}

/** All engines of one replica onto the cluster, committed to the ledger only when all fit. */
function placeReplica(d: ModelDeployment, c: Candidate, ledger: Ledger): MemberPlacement[][] | undefined {
  const name = c.view.cluster.name;
  const touched = new Map<PoolView, PoolCapacity>();
  const working: WorkingPools = {
    get: (pool) => touched.get(pool) ?? ledger.pool(name, pool),
    set: (pool, cap) => touched.set(pool, cap),
  };
  c.tables ??= d.engines.map((e) => engineMatches(e, c.view));
  const engines: MemberPlacement[][] = [];
  for (const [i, engine] of d.engines.entries()) {
    const placement = placeEngine(engine, c.view, c.tables[i]!, working);
    if (!placement) return undefined;
    engines.push(placement);
  }
  for (const [pool, cap] of touched) ledger.commit(name, pool, cap);
  return engines;
}

export function replicaName(deployment: string, cluster: string, index: number): string {
  return `${deployment}-${cluster}-${index}`;
}

function newReplica(
  d: ModelDeployment,
  view: ClusterView,
  index: number,
  placements: MemberPlacement[][],
): PlacedReplica {
  const engines: ReplicaEngine[] = d.engines.map((engine, i) => ({
    name: engine.name,
    copies: engine.copies,
    members: engine.members.map((member, j) => {
      const p = placements[i]![j]!;
      return {
        role: member.role,
        ...(member.role === "Worker" ? { workerNodes: member.workerNodes ?? 1 } : {}),
        nodePoolName: p.pool.pool.name,
        deviceRequests: p.match.requests,
      };
    }),
  }));
  return {
    namespace: d.namespace,
    name: replicaName(d.name, view.cluster.name, index),
    deployment: d.name,
    clusterName: view.cluster.name,
    index,
    engines,
    podsScheduled: false,
    gateway: view.cluster.gatewayAddress ?? null,
    retained: false,
  };
}

/** A retained replica in the current spec's terms, on the pools it is pinned to. */
function emitRetained(
  d: ModelDeployment,
  r: ModelReplica,
  clusters: ReadonlyMap<string, ClusterView>,
): PlacedReplica {
  const view = clusters.get(r.clusterName)!;
  const placements = d.engines.map((engine) => {
    const recorded = r.engines.find((e) => e.name === engine.name)!;
    return engine.members.map((member, j) => {
      const pool = view.poolByName.get(recorded.members[j]!.nodePoolName)!;
      return { pool, match: memberMatchOrEmpty(member, pool) };
    });
  });
  const fresh = newReplica(d, view, r.index, placements);
  return { ...fresh, name: r.name, podsScheduled: r.podsScheduled, retained: true };
}

function memberMatchOrEmpty(member: Member, pool: PoolView): MemberMatch {
  // Retention already checked the member matches its pool.
  return memberMatch(member, pool) ?? { requests: [], claim: {} };
}

/** An observed replica as recorded (a deployment with invalid selectors keeps what runs). */
function emitRecorded(r: ModelReplica, clusters: ReadonlyMap<string, ClusterView>): PlacedReplica {
  return { ...r, gateway: clusters.get(r.clusterName)?.cluster.gatewayAddress ?? null, retained: true };
}
