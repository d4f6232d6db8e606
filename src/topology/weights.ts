// The weights-locality preference (docs/rules/topology.md): a Pod whose model weights some nodes
// already hold gets one preferred node-affinity term per weights digest, naming at most 16
// hostnames. A preference only orders nodes with room; it never changes feasibility.
import { cmp } from "./capacity.js";
import { HOSTNAME } from "./levels.js";

export const MAX_TERM_HOSTNAMES = 16;
/** Kubernetes weights are 1..100; every digest weighs the same. */
export const TERM_WEIGHT = 10;

/** One node's model store, as its NodeModelStore and CSINode report it. */
export interface NodeModelStore {
  node: string;
  /** The store's Ready condition is True. */
  ready: boolean;
  /** The node's CSINode lists the model CSI driver now. */
  csiRegistered: boolean;
  digests: readonly { digest: string; ready: boolean; mounted: boolean; lastUsed?: number }[];
}

export interface PreferredTerm {
  weight: number;
  preference: { matchExpressions: { key: string; operator: "In"; values: string[] }[] };
}

/** One term per digest some node holds, in digest order; a digest no node holds adds none. */
export function weightsAffinity(
  digests: readonly string[],
  stores: readonly NodeModelStore[],
): PreferredTerm[] {
  const terms: PreferredTerm[] = [];
  for (const digest of [...new Set(digests)].sort(cmp)) {
    const holders: { node: string; mounted: boolean; lastUsed: number }[] = [];
    for (const s of stores) {
      // A store the plugin left behind keeps a stale Ready: it counts only while all three hold.
      if (!s.ready || !s.csiRegistered) continue;
      const d = s.digests.find((x) => x.digest === digest && x.ready);
      if (d) holders.push({ node: s.node, mounted: d.mounted, lastUsed: d.lastUsed ?? 0 });
    }
    if (holders.length === 0) continue;
    holders.sort(
      (a, b) => Number(b.mounted) - Number(a.mounted) || b.lastUsed - a.lastUsed || cmp(a.node, b.node),
    );
    terms.push({
      weight: TERM_WEIGHT,
      preference: {
        matchExpressions: [
          { key: HOSTNAME, operator: "In", values: holders.slice(0, MAX_TERM_HOSTNAMES).map((h) => h.node) },
        ],
      },
    });
  }
  return terms;
}

/** The hostnames the terms prefer, for admission's ordering. */
export function preferredHostnames(terms: readonly PreferredTerm[]): string[] {
  return [...new Set(terms.flatMap((t) => t.preference.matchExpressions.flatMap((e) => e.values)))];
}
