// Admission of one gang (docs/rules/topology.md "Admission of a gang", Kueue's Topology-Aware
// Scheduling): the whole gang inside one domain at the required level, or nothing.
//
// Per profile tree, pods that fit are counted per leaf and summed up the tree. At the required
// level the domains are sorted by count (descending, then path) and the smallest one that fits
// is taken (BestFit); a preferred request escalates one level at a time and, at the top, takes
// domains greedily (largest first, the last one tight-fitted); an unconstrained request takes
// leaves smallest-first (LeastFreeCapacity). Below the chosen domain the same BestFit descends
// level by level to the leaves. Profiles are tried in id order and never combined.
import { type Capacity, cmp, leavesAreNodes, type ProfileTree, podsThatFit } from "./capacity.js";
import { HOSTNAME } from "./levels.js";
import type { ExclusionReason, Gang, NodeState, Resources, Toleration, TopologyAssignment } from "./types.js";

export type GangAdmission =
  | {
      admitted: true;
      profile: string;
      assignment: TopologyAssignment;
      message: string;
      /** Pods per node, for reservations. */
      takes: { node: string; count: number }[];
    }
  | { admitted: false; message: string };

/** The Kueue Topology generated for a profile. */
export function topologyName(profile: string): string {
  return `kubemoot-${profile}`;
}

export function admitGang(gang: Gang, capacity: Capacity): GangAdmission {
  const n = gang.size;
  if (!Number.isSafeInteger(n) || n < 1) return { admitted: false, message: `gang size ${n} is not ≥ 1` };
  const t = gang.topology;
  if (t.mode !== "unconstrained" && t.level === HOSTNAME) {
    return {
      admitted: false,
      message: `${HOSTNAME} is implicit and cannot be requested as a level`,
    };
  }
  const failures: string[] = [];
  let candidates = 0;
  for (const tree of capacity.trees) {
    const li = t.mode === "unconstrained" ? tree.levels.length - 1 : tree.levels.indexOf(t.level);
    if (li < 0) continue;
    candidates++;
    const c = countTree(tree, gang);
    const outcome = chooseInTree(tree, c.counts, li, gang);
    if (outcome.ok) {
      const assignment: TopologyAssignment = {
        levels: [...tree.levels],
        domains: outcome.leaves
          .sort((a, b) => a[0] - b[0])
          .map(([leaf, count]) => ({
            values: [...tree.domains[tree.levels.length - 1]![leaf]!.values],
            count,
          })),
      };
      return {
        admitted: true,
        profile: tree.profile,
        assignment,
        message: `admitted in topology "${topologyName(tree.profile)}": ${outcome.how}`,
        takes: takesOf(tree, outcome.leaves, gang, c.blocked),
      };
    }
    const fit = outcome.fit;
    const text =
      fit > 0 ? `allows to fit only ${fit} out of ${n} pod(s)` : `doesn't allow to fit any of ${n} pod(s)`;
    const where = t.mode === "unconstrained" ? "" : ` at level ${tree.levels[outcome.level]}`;
    failures.push(
      `topology "${topologyName(tree.profile)}"${where} ${text}${exclusionText({ ...tree.excluded, ...(c.tainted ? { Taint: c.tainted } : {}) })}`,
    );
  }
  if (candidates === 0) {
    return {
      admitted: false,
      message:
        t.mode === "unconstrained"
          ? `no schedulable nodes for ${n} pod(s)`
          : `no hierarchy profile has level ${t.level} (${n} pod(s))`,
    };
  }
  return { admitted: false, message: failures.join("; ") };
}

const REASON_TEXT: Record<ExclusionReason, string> = {
  NotReady: "not Ready",
  Unschedulable: "unschedulable",
  Taint: "untolerated taint",
  MissingLabel: "missing level labels",
};

function exclusionText(excluded: Partial<Record<ExclusionReason, number>>): string {
  const parts = (Object.keys(REASON_TEXT) as ExclusionReason[])
    .filter((r) => (excluded[r] ?? 0) > 0)
    .map((r) => `${excluded[r]} ${REASON_TEXT[r]}`);
  return parts.length > 0 ? ` (excluded nodes: ${parts.join(", ")})` : "";
}

interface Counts {
  /** counts[level][domain]: pods that fit. */
  counts: Int32Array[];
  tainted: number;
  /** Nodes (tree indexes) with an untolerated taint. */
  blocked: Set<number>;
}

function countTree(tree: ProfileTree, gang: Gang): Counts {
  const depth = tree.levels.length;
  const counts = tree.domains.map((d) => new Int32Array(d.length));
  const blocked = new Set<number>();
  const leaves = tree.domains[depth - 1]!;
  const leafCounts = counts[depth - 1]!;
  // Requested resources as parallel arrays: this loop runs once per node per decision.
  const keys: string[] = [];
  const amounts: number[] = [];
  for (const key in gang.requests) {
    const r = gang.requests[key]!;
    if (r > 0) {
      keys.push(key);
      amounts.push(r);
    }
  }
  const podsIn = (free: Resources | undefined): number => {
    if (keys.length === 0 || !free) return 0;
    let n = Number.POSITIVE_INFINITY;
    for (let k = 0; k < keys.length; k++) {
      const f = free[keys[k]!] ?? 0;
      const m = f <= 0 ? 0 : Math.floor(f / amounts[k]!);
      if (m < n) n = m;
      if (n === 0) return 0;
    }
    return n;
  };
  const isBlocked = (idx: number): boolean => {
    const node = tree.nodes[idx]!;
    if (node.taints.length === 0 || !untolerated(node, gang.tolerations)) return false;
    blocked.add(idx);
    return true;
  };
  for (let i = 0; i < leaves.length; i++) {
    const nodes = leaves[i]!.nodes;
    if (nodes.length === 1) {
      const idx = nodes[0]!;
      if (!isBlocked(idx)) leafCounts[i] = podsIn(tree.free[idx]);
      continue;
    }
    // A merged leaf: its nodes' free resources summed, as one domain.
    const sum: Record<string, number> = {};
    for (const idx of nodes) {
      if (isBlocked(idx)) continue;
      const free = tree.free[idx];
      for (const key of keys) sum[key] = (sum[key] ?? 0) + Math.max(0, free?.[key] ?? 0);
    }
    leafCounts[i] = podsIn(sum);
  }
  for (let l = depth - 2; l >= 0; l--) {
    const doms = tree.domains[l]!;
    const below = counts[l + 1]!;
    const here = counts[l]!;
    for (let d = 0; d < doms.length; d++) {
      let s = 0;
      for (const c of doms[d]!.children) s += below[c]!;
      here[d] = s;
    }
  }
  return { counts, tainted: blocked.size, blocked };
}

export function untolerated(node: NodeState, tolerations: readonly Toleration[]): boolean {
  return node.taints.some(
    (t) =>
      (t.effect === "NoSchedule" || t.effect === "NoExecute") &&
      !tolerations.some((tol) => tolerates(tol, t)),
  );
}

function tolerates(tol: Toleration, taint: NodeState["taints"][number]): boolean {
  if (tol.effect && tol.effect !== taint.effect) return false;
  if (!tol.key) return tol.operator === "Exists";
  if (tol.key !== taint.key) return false;
  return tol.operator === "Exists" || (tol.value ?? "") === (taint.value ?? "");
}

type Outcome =
  | { ok: true; leaves: [number, number][]; how: string }
  | { ok: false; fit: number; level: number };

function chooseInTree(tree: ProfileTree, counts: Int32Array[], li: number, gang: Gang): Outcome {
  const n = gang.size;
  const depth = tree.levels.length;
  const hot = new Set(gang.preferredNodes ?? []);
  const all = (l: number) => Array.from({ length: counts[l]!.length }, (_, i) => i);
  const t = gang.topology;
  if (t.mode === "unconstrained") {
    const leaves = all(depth - 1);
    const picks = pickLeaves(tree, leaves, counts[depth - 1]!, n, hot, leastFree);
    if (!picks) return { ok: false, fit: sum(counts[depth - 1]!), level: depth - 1 };
    return {
      ok: true,
      leaves: picks,
      how: `${n} pod(s) on ${picks.length} ${leafWord(tree)}(s), fewest free first`,
    };
  }
  const descend = (l: number, picks: [number, number][]) =>
    picks.flatMap(([d, k]) => down(tree, counts, l, d, k, hot));
  for (let l = li; l >= 0; l--) {
    const c = counts[l]!;
    const sorted = sortDesc(all(l), c);
    const first = sorted[0];
    if (first !== undefined && c[first]! >= n) {
      const d = smallestFitting(sorted, c, n);
      const where = `${tree.levels[l]}=${tree.domains[l]![d]!.values[l]}`;
      const how =
        l === li
          ? `${n} pod(s) within ${where}`
          : `${n} pod(s) within ${where} (no ${t.level} domain had room)`;
      return { ok: true, leaves: descend(l, [[d, n]]), how };
    }
    if (t.mode === "required") return { ok: false, fit: first === undefined ? 0 : c[first]!, level: l };
  }
  const top = counts[0]!;
  const picks = greedyLargest(sortDesc(all(0), top), top, n);
  if (!picks) return { ok: false, fit: sum(top), level: 0 };
  return {
    ok: true,
    leaves: descend(0, picks),
    how: `${n} pod(s) across ${picks.length} ${tree.levels[0]} domain(s) (no single domain had room)`,
  };
}

function leafWord(tree: ProfileTree): string {
  return leavesAreNodes(tree) ? "node" : `${tree.levels[tree.levels.length - 1]} domain`;
}

/** Below domain d at level l, place k pods level by level down to the leaves. */
function down(
  tree: ProfileTree,
  counts: Int32Array[],
  l: number,
  d: number,
  k: number,
  hot: ReadonlySet<string>,
): [number, number][] {
  const depth = tree.levels.length;
  if (l === depth - 1) return [[d, k]];
  const children = tree.domains[l]![d]!.children;
  if (l + 1 === depth - 1) return pickLeaves(tree, children, counts[l + 1]!, k, hot, bestFit)!;
  return bestFit(children, counts[l + 1]!, k)!.flatMap(([c, m]) => down(tree, counts, l + 1, c, m, hot));
}

type Picker = (cands: number[], count: ArrayLike<number>, need: number) => [number, number][] | undefined;

/** Nodes holding the gang's weights take what fits first; the rest go by `pick`. */
function pickLeaves(
  tree: ProfileTree,
  cands: number[],
  count: ArrayLike<number>,
  need: number,
  hot: ReadonlySet<string>,
  pick: Picker,
): [number, number][] | undefined {
  if (hot.size === 0 || !leavesAreNodes(tree)) return pick(cands, count, need);
  const leaves = tree.domains[tree.levels.length - 1]!;
  const nameOf = (leaf: number) => tree.nodes[leaves[leaf]!.nodes[0]!]!.name;
  const hotLeaves = cands
    .filter((c) => hot.has(nameOf(c)) && count[c]! > 0)
    .sort((a, b) => cmp(nameOf(a), nameOf(b)));
  const out: [number, number][] = [];
  let rem = need;
  for (const h of hotLeaves) {
    if (rem === 0) break;
    const k = Math.min(rem, count[h]!);
    out.push([h, k]);
    rem -= k;
  }
  if (rem === 0) return out;
  const taken = new Set(out.map(([h]) => h));
  const rest = pick(
    cands.filter((c) => !taken.has(c)),
    count,
    rem,
  );
  return rest ? [...out, ...rest] : undefined;
}

function sortDesc(cands: number[], count: ArrayLike<number>): number[] {
  return [...cands].sort((a, b) => count[b]! - count[a]! || a - b);
}

/** In `sorted` (count descending), the smallest domain with room for `need`; ties by order. */
function smallestFitting(sorted: readonly number[], count: ArrayLike<number>, need: number): number {
  let best = -1;
  for (const d of sorted) {
    if (count[d]! < need) break;
    if (best < 0 || count[d]! < count[best]!) best = d;
  }
  return best;
}

/** One domain that fits (the smallest), else greedily largest-first with the last one tight. */
function bestFit(cands: number[], count: ArrayLike<number>, need: number): [number, number][] | undefined {
  const sorted = sortDesc(cands, count);
  const first = sorted[0];
  if (first !== undefined && count[first]! >= need) return [[smallestFitting(sorted, count, need), need]];
  return greedyLargest(sorted, count, need);
}

function greedyLargest(
  sorted: number[],
  count: ArrayLike<number>,
  need: number,
): [number, number][] | undefined {
  const out: [number, number][] = [];
  let rem = need;
  for (let i = 0; i < sorted.length && rem > 0; i++) {
    const c = count[sorted[i]!]!;
    if (c === 0) break;
    if (c >= rem) {
      out.push([smallestFitting(sorted.slice(i), count, rem), rem]);
      return out;
    }
    out.push([sorted[i]!, c]);
    rem -= c;
  }
  return rem > 0 ? undefined : out;
}

/** LeastFreeCapacity: the fullest leaves first, so large free domains stay whole. */
function leastFree(cands: number[], count: ArrayLike<number>, need: number): [number, number][] | undefined {
  // Counts are small integers: bucket them (stable, so path order breaks ties) instead of sorting.
  const buckets: number[][] = [];
  for (const c of cands) {
    const k = count[c]!;
    if (k === 0) continue;
    const bucket = buckets[k];
    if (bucket) bucket.push(c);
    else buckets[k] = [c];
  }
  const out: [number, number][] = [];
  let rem = need;
  for (let k = 1; k < buckets.length && rem > 0; k++) {
    for (const d of buckets[k] ?? []) {
      if (rem === 0) break;
      const take = Math.min(rem, k);
      out.push([d, take]);
      rem -= take;
    }
  }
  return rem > 0 ? undefined : out;
}

function sum(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]!;
  return s;
}

/** Pods per node: a leaf's count spread over its nodes by what each fits. */
function takesOf(
  tree: ProfileTree,
  picks: readonly [number, number][],
  gang: Gang,
  blocked: ReadonlySet<number>,
): { node: string; count: number }[] {
  const leaves = tree.domains[tree.levels.length - 1]!;
  const out: { node: string; count: number }[] = [];
  for (const [leaf, count] of picks) {
    const nodes = leaves[leaf]!.nodes.filter((i) => !blocked.has(i));
    let rem = count;
    for (const idx of nodes) {
      if (rem === 0) break;
      const node = tree.nodes[idx]!;
      const k = Math.min(rem, podsThatFit(tree.free[idx], gang.requests));
      if (k > 0) out.push({ node: node.name, count: k });
      rem -= k;
    }
    // Summed free can fit a pod no single node fits (Kueue counts merged leaves the same way);
    // the remainder is charged to the leaf's first node so the reservation is never lost.
    if (rem > 0 && nodes.length > 0) out.push({ node: tree.nodes[nodes[0]!]!.name, count: rem });
  }
  return out;
}
