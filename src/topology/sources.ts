// Source status (docs/rules/topology.md "Topology sources"): which sources are Ready and, per Node
// they select, the level values they give it. A nodeLabels source reads the Nodes' own labels
// and is not Ready when they break the tree; a configMap source is Ready when its snapshot
// validates; a webhook source is fetched by the operator, so here it is Ready only when the
// caller passes the body it fetched.
import { compileSelector } from "../binding/index.js";
import { parseDuration } from "./duration.js";
import { treeProblem } from "./hierarchy.js";
import { normalizeLevels, READ_ONLY_PARENTS } from "./levels.js";
import { validateSnapshot } from "./snapshot.js";
import type { Labels, TopologySource } from "./types.js";

export interface SourceStatus {
  name: string;
  ready: boolean;
  reason: string;
  message: string;
  revision?: string;
  /** Normalized (Topograph tiers coarsest-first). */
  levels: string[];
  /** Nodes the selector picks (from the Nodes' own labels), sorted. */
  selectedNodes: string[];
  /** Per selected node, its values for the source's levels (empty for a source not Ready). */
  values: Map<string, Record<string, string>>;
}

export interface SourceInputs {
  nodes: ReadonlyMap<string, Labels>;
  /** ConfigMap data by `<namespace>/<name>`. */
  configMaps: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Webhook bodies already fetched, by source name. */
  webhookBodies?: ReadonlyMap<string, unknown>;
}

export function evaluateSource(source: TopologySource, inputs: SourceInputs): SourceStatus {
  const levels = normalizeLevels(source.levels);
  const base = { name: source.name, levels, values: new Map<string, Record<string, string>>() };
  const compiled = compileSelector(source.nodeSelector, "spec.nodeSelector");
  if (!compiled.ok) {
    return { ...base, ready: false, reason: "InvalidSelector", message: compiled.error, selectedNodes: [] };
  }
  const selectedNodes = [...inputs.nodes.keys()]
    .filter((n) => compiled.selector.matches(inputs.nodes.get(n)!))
    .sort();
  const notReady = (reason: string, message: string): SourceStatus => ({
    ...base,
    ready: false,
    reason,
    message,
    selectedNodes,
  });

  if (source.arm.kind === "nodeLabels") {
    const records = selectedNodes.map((n): [string, Record<string, string>] => {
      const labels = inputs.nodes.get(n)!;
      const rec: Record<string, string> = {};
      for (const l of levels) if (labels[l] !== undefined) rec[l] = labels[l];
      return [n, rec];
    });
    const problem = treeProblem(levels, records);
    if (problem) return notReady("InvalidHierarchy", problem.message);
    return {
      ...base,
      ready: true,
      reason: "Accepted",
      message: `${selectedNodes.length} node(s) described by their labels`,
      selectedNodes,
      values: new Map(records),
    };
  }

  let body: unknown;
  if (source.arm.kind === "configMap") {
    const { namespace, name, key } = source.arm;
    const data = inputs.configMaps.get(`${namespace}/${name}`);
    if (!data) return notReady("SnapshotUnavailable", `ConfigMap ${namespace}/${name} not found`);
    if (data[key] === undefined) {
      return notReady("SnapshotUnavailable", `ConfigMap ${namespace}/${name} has no key ${key}`);
    }
    body = data[key];
  } else {
    body = inputs.webhookBodies?.get(source.name);
    if (body === undefined) {
      return notReady("SnapshotUnavailable", `webhook ${source.arm.url} has not been fetched`);
    }
  }
  const result = validateSnapshot(source, body, inputs.nodes);
  if (!result.ok) return notReady(result.reason, result.message);
  // Selected nodes the snapshot omits keep only the cloud parents they already carry.
  const values = new Map<string, Record<string, string>>();
  for (const n of selectedNodes) {
    const rec = result.nodes.get(n) ?? readOnlyValues(levels, inputs.nodes.get(n)!);
    values.set(n, rec);
  }
  return {
    ...base,
    ready: true,
    reason: "Accepted",
    message: `revision ${result.revision}: ${result.nodes.size} of ${selectedNodes.length} selected node(s) described`,
    revision: result.revision,
    selectedNodes,
    values,
  };
}

function readOnlyValues(levels: readonly string[], labels: Labels): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of levels) if (READ_ONLY_PARENTS.includes(l) && labels[l] !== undefined) out[l] = labels[l];
  return out;
}

/**
 * Whether the last valid snapshot still stands after a failed read: it stays in force until
 * `maxStaleness` (a duration like "1h") has passed since it was last read successfully; with
 * no maxStaleness it stays until a valid snapshot replaces it.
 */
export function lastValidInForce(
  lastSuccessAt: number,
  maxStaleness: string | undefined,
  now: number,
): boolean {
  if (maxStaleness === undefined) return true;
  const ms = parseDuration(maxStaleness);
  return ms !== undefined && now - lastSuccessAt < ms;
}
