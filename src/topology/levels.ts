// Level keys: the well-known ones, Topograph tier normalization and profile ids.

export const HOSTNAME = "kubernetes.io/hostname";
export const REGION = "topology.kubernetes.io/region";
export const ZONE = "topology.kubernetes.io/zone";
/** Cloud-provided keys a snapshot may only repeat (as read-only parents), never set. */
export const READ_ONLY_PARENTS: readonly string[] = [REGION, ZONE];
export const OWN_PREFIX = "topology.kubemoot.ai/";
/** The generated profile label: no source may publish it. */
export const PROFILE_LABEL = "topology.kubemoot.ai/profile";
export const SNAPSHOT_API_VERSION = "topology.kubemoot.ai/v1alpha1";
export const MAX_LEVELS = 16;

const TOPOGRAPH_TIER = /^fabric\.topograph\.run\/tier-(\d+)$/;

/**
 * Topograph numbers its fabric tiers closest-first (tier-1 is the switch next to the node);
 * every contiguous run of them is reordered coarsest-first so the list reads like any other.
 */
export function normalizeLevels(levels: readonly string[]): string[] {
  const out: string[] = [];
  let run: { key: string; n: number }[] = [];
  const flush = () => {
    run.sort((a, b) => b.n - a.n);
    for (const t of run) out.push(t.key);
    run = [];
  };
  for (const key of levels) {
    const m = TOPOGRAPH_TIER.exec(key);
    if (m) {
      run.push({ key, n: Number(m[1]) });
      continue;
    }
    flush();
    out.push(key);
  }
  flush();
  return out;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

/** FNV-1a 64 over the UTF-8 bytes of `text`, as 16 lowercase hex digits. */
export function fnv1a64(text: string): string {
  let h = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * FNV_PRIME) & MASK;
  }
  return h.toString(16).padStart(16, "0");
}

/** `fnv64-<hex>` of the level keys joined by NUL: the shape of a hierarchy, not its values. */
export function profileId(levels: readonly string[]): string {
  return `fnv64-${fnv1a64(levels.join("\0"))}`;
}
