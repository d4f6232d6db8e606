// The queue plan's flavors (docs/rules/topology.md): one ResourceFlavor per hardware identity ×
// hierarchy profile, so capacity of different hierarchy shapes is never added together. Kueue
// allows at most 64 flavors in a resource group: a bigger plan is refused whole and the
// previous plan stays in force.
import { cmp } from "./capacity.js";
import { PROFILE_LABEL } from "./levels.js";

export const MAX_FLAVORS = 64;
/** The hardware identity label (GPU feature discovery's product name). */
export const HARDWARE_LABEL = "nvidia.com/gpu.product";

export interface Flavor {
  name: string;
  profile: string;
  /** The HARDWARE_LABEL value, or undefined for nodes without one. */
  hardware?: string;
  nodeLabels: Record<string, string>;
  nodes: string[];
}

export type FlavorPlan =
  | { ok: true; flavors: Flavor[] }
  | { ok: false; reason: "TooManyFlavors"; message: string; previous?: Flavor[] };

/** `nodes`: name → (profile, hardware identity). */
export function planFlavors(
  nodes: ReadonlyMap<string, { profile: string; hardware?: string }>,
  previous?: Flavor[],
): FlavorPlan {
  const byKey = new Map<string, Flavor>();
  for (const name of [...nodes.keys()].sort(cmp)) {
    const { profile, hardware } = nodes.get(name)!;
    const key = `${hardware ?? ""}\0${profile}`;
    let f = byKey.get(key);
    if (!f) {
      f = {
        name: flavorName(profile, hardware),
        profile,
        ...(hardware !== undefined ? { hardware } : {}),
        nodeLabels: {
          [PROFILE_LABEL]: profile,
          ...(hardware !== undefined ? { [HARDWARE_LABEL]: hardware } : {}),
        },
        nodes: [],
      };
      byKey.set(key, f);
    }
    f.nodes.push(name);
  }
  const flavors = [...byKey.values()].sort((a, b) => cmp(a.name, b.name));
  if (flavors.length > MAX_FLAVORS) {
    return {
      ok: false,
      reason: "TooManyFlavors",
      message: `the plan needs ${flavors.length} flavors (hardware identities × profiles); Kueue allows ${MAX_FLAVORS}`,
      ...(previous ? { previous } : {}),
    };
  }
  return { ok: true, flavors };
}

function flavorName(profile: string, hardware: string | undefined): string {
  const hw = (hardware ?? "default")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
  return `kubemoot-${hw || "default"}-${profile}`;
}
