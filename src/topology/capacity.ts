// Capacity trees (docs/rules/topology.md "Admission of a gang"): one tree per hierarchy profile, its
// domains at every level in path order. A leaf is a lowest-level domain: one node when the
// lowest level is the hostname, else every node with the same level values (their free
// resources summed, as Kueue sums them). Nodes admission can never use are excluded here and
// counted by reason; taints depend on the gang's tolerations, so they are judged per gang.
import { HOSTNAME } from "./levels.js";
import type { ExclusionReason, NodeState, Resources } from "./types.js";

export interface Domain {
  /** Values of levels 0..level, the domain's path. */
  values: string[];
  /** Indexes into the next level's domains (path order); empty at the leaf level. */
  children: number[];
  /** Leaf level only: indexes into ProfileTree.nodes. */
  nodes: number[];
}

export interface ProfileTree {
  profile: string;
  levels: string[];
  /** domains[level] in path order; domains[levels.length - 1] are the leaves. */
  domains: Domain[][];
  nodes: NodeState[];
  /** Free resources per node (aligned with `nodes`), after reservations. */
  free: Resources[];
  excluded: Partial<Record<ExclusionReason, number>>;
}

export interface Capacity {
  /** Sorted by profile id: the order admission tries them in (the queue's flavor order). */
  trees: ProfileTree[];
  exclusions: { node: string; profile: string; reason: ExclusionReason }[];
  /** Where each usable node sits: its tree and its index in the tree's nodes. */
  index: ReadonlyMap<string, { tree: number; node: number }>;
}

export interface ProfileRef {
  profile: string;
  levels: readonly string[];
}

/**
 * Builds one tree per profile. `profileOf` gives each node's profile (nodes without one are
 * left out); a node's level values come from its `labels`.
 */
export function buildCapacity(
  nodes: readonly NodeState[],
  profileOf: ReadonlyMap<string, ProfileRef>,
): Capacity {
  const groups = new Map<string, { levels: readonly string[]; nodes: NodeState[] }>();
  const exclusions: Capacity["exclusions"] = [];
  const excludedBy = new Map<string, Partial<Record<ExclusionReason, number>>>();
  for (const node of [...nodes].sort((a, b) => cmp(a.name, b.name))) {
    const ref = profileOf.get(node.name);
    if (!ref) continue;
    let group = groups.get(ref.profile);
    if (!group) {
      group = { levels: ref.levels, nodes: [] };
      groups.set(ref.profile, group);
    }
    const reason: ExclusionReason | undefined = !node.ready
      ? "NotReady"
      : node.unschedulable
        ? "Unschedulable"
        : ref.levels.some((l) => node.labels[l] === undefined || node.labels[l] === "")
          ? "MissingLabel"
          : undefined;
    if (reason) {
      exclusions.push({ node: node.name, profile: ref.profile, reason });
      const counts = excludedBy.get(ref.profile) ?? {};
      counts[reason] = (counts[reason] ?? 0) + 1;
      excludedBy.set(ref.profile, counts);
      continue;
    }
    group.nodes.push(node);
  }
  const trees = [...groups.entries()]
    .sort(([a], [b]) => cmp(a, b))
    .map(([profile, g]) => buildTree(profile, g.levels, g.nodes, excludedBy.get(profile) ?? {}));
  const index = new Map<string, { tree: number; node: number }>();
  trees.forEach((t, ti) => {
    t.nodes.forEach((n, ni) => {
      index.set(n.name, { tree: ti, node: ni });
    });
  });
  return { trees, exclusions, index };
}

function buildTree(
  profile: string,
  levels: readonly string[],
  nodes: NodeState[],
  excluded: Partial<Record<ExclusionReason, number>>,
): ProfileTree {
  const depth = levels.length;
  // Sorting by path once gives every level's domains in path order, children contiguous.
  const paths = nodes.map((n) => levels.map((l) => n.labels[l]!));
  const order = nodes.map((_, i) => i).sort((a, b) => cmpPath(paths[a]!, paths[b]!) || a - b);
  const domains: Domain[][] = levels.map(() => []);
  const last: (Domain | undefined)[] = levels.map(() => undefined);
  for (const i of order) {
    const path = paths[i]!;
    let changed = false;
    for (let l = 0; l < depth; l++) {
      const prev = last[l];
      if (!changed && prev && prev.values[l] === path[l]) continue;
      changed = true;
      const d: Domain = { values: path.slice(0, l + 1), children: [], nodes: [] };
      domains[l]!.push(d);
      last[l] = d;
      if (l > 0) last[l - 1]!.children.push(domains[l]!.length - 1);
    }
    last[depth - 1]!.nodes.push(i);
  }
  return {
    profile,
    levels: [...levels],
    domains,
    nodes,
    free: nodes.map((n) => n.free),
    excluded: { ...excluded },
  };
}

/** Whether the tree's leaves are single nodes (the lowest level is the hostname). */
export function leavesAreNodes(tree: ProfileTree): boolean {
  return tree.levels[tree.levels.length - 1] === HOSTNAME;
}

/** Pods of `requests` that fit in `free`: min over requested resources of ⌊free / request⌋. */
export function podsThatFit(free: Resources | undefined, requests: Resources): number {
  let n = Number.POSITIVE_INFINITY;
  for (const key in requests) {
    const r = requests[key]!;
    if (r <= 0) continue;
    const f = free?.[key] ?? 0;
    const k = f <= 0 ? 0 : Math.floor(f / r);
    if (k < n) n = k;
    if (n === 0) return 0;
  }
  return Number.isFinite(n) ? n : 0;
}

/** Free resources of a node after reservations; undefined for nodes admission cannot use. */
export function freeOf(capacity: Capacity, node: string): Resources | undefined {
  const at = capacity.index.get(node);
  return at ? capacity.trees[at.tree]!.free[at.node] : undefined;
}

/**
 * A new Capacity with `count` pods of `requests` taken from each named node. Only the trees
 * touched are copied, so a reservation costs the size of one tree's free list, not a rebuild.
 */
export function reserve(
  capacity: Capacity,
  takes: readonly { node: string; count: number }[],
  requests: Resources,
): Capacity {
  const trees = [...capacity.trees];
  const copied = new Set<number>();
  for (const { node, count } of takes) {
    const at = capacity.index.get(node);
    if (!at) continue;
    if (!copied.has(at.tree)) {
      trees[at.tree] = { ...trees[at.tree]!, free: [...trees[at.tree]!.free] };
      copied.add(at.tree);
    }
    const free = trees[at.tree]!.free;
    const after: Record<string, number> = { ...free[at.node] };
    for (const key in requests) after[key] = (after[key] ?? 0) - requests[key]! * count;
    free[at.node] = after;
  }
  return { ...capacity, trees };
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function cmpPath(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const c = cmp(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}
