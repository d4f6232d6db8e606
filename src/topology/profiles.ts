// Hierarchy profiles (docs/rules/topology.md "Hierarchy profiles"): per Node, the one Ready source
// selecting it gives the levels, cut at the first level the Node has no value for; zero or
// several sources give none (conflicting inventories are never merged). The hostname level is
// always last. Nodes with the same level list share a profile.
import { HOSTNAME, profileId } from "./levels.js";
import type { SourceStatus } from "./sources.js";
import type { Labels } from "./types.js";

export interface NodeProfile {
  levels: string[];
  profile: string;
  /** The source that gave the levels, if any. */
  source?: string;
  /** The Node's labels with the source's level values projected onto them. */
  labels: Record<string, string>;
}

export interface Profiles {
  nodes: Map<string, NodeProfile>;
  /** Profile id → levels, sorted by id. */
  profiles: Map<string, string[]>;
}

export function deriveProfiles(
  nodes: ReadonlyMap<string, Labels>,
  sources: readonly SourceStatus[],
): Profiles {
  const out = new Map<string, NodeProfile>();
  const profiles = new Map<string, string[]>();
  const ready = sources.filter((s) => s.ready);
  for (const name of [...nodes.keys()].sort()) {
    const labels: Record<string, string> = { ...nodes.get(name)! };
    const selecting = ready.filter((s) => s.selectedNodes.includes(name));
    const levels: string[] = [];
    let source: string | undefined;
    if (selecting.length === 1) {
      const s = selecting[0]!;
      source = s.name;
      const values = s.values.get(name) ?? {};
      Object.assign(labels, values);
      for (const l of s.levels) {
        if (values[l] === undefined) break;
        levels.push(l);
      }
    }
    levels.push(HOSTNAME);
    const id = profileId(levels);
    profiles.set(id, levels);
    out.set(name, { levels, profile: id, ...(source ? { source } : {}), labels });
  }
  return { nodes: out, profiles: new Map([...profiles].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

/**
 * Generated hierarchies are immutable: a profile whose existing Topology lists other levels
 * (a hash collision or a hand edit) is reported, never rewritten. Returns one message per drift.
 */
export function detectDrift(
  existing: ReadonlyMap<string, readonly string[]>,
  derived: ReadonlyMap<string, readonly string[]>,
): string[] {
  const out: string[] = [];
  for (const [id, levels] of derived) {
    const old = existing.get(id);
    if (old && (old.length !== levels.length || old.some((l, i) => l !== levels[i]))) {
      out.push(
        `profile ${id}: the existing hierarchy has levels [${old.join(", ")}], ` +
          `the derived one [${levels.join(", ")}]; refusing to rewrite it`,
      );
    }
  }
  return out;
}
