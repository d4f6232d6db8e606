// Snapshot validation (docs/rules/topology.md "Topology sources"): a ConfigMap key or webhook body is
// accepted or rejected whole, before anything changes. The first problem rejects it, with the
// checks run in the spec's order over the whole document (every node for one check, then the
// next), so the same document always reports the same problem.
import { parse } from "yaml";
import { compileSelector, labelValueError } from "../binding/index.js";
import { treeProblem } from "./hierarchy.js";
import {
  normalizeLevels,
  OWN_PREFIX,
  PROFILE_LABEL,
  READ_ONLY_PARENTS,
  SNAPSHOT_API_VERSION,
} from "./levels.js";
import type { Labels, TopologySource } from "./types.js";

export type SnapshotRejection =
  | "InvalidSnapshot"
  | "InvalidSelector"
  | "WrongAPIVersion"
  | "BlankRevision"
  | "UnselectedNode"
  | "UndeclaredLevel"
  | "ForbiddenKey"
  | "InvalidValue"
  | "MissingParent"
  | "ConflictingParent";

export type SnapshotResult =
  | { ok: true; revision: string; nodes: Map<string, Record<string, string>> }
  | { ok: false; reason: SnapshotRejection; message: string };

/**
 * Validates one snapshot document for `source`.
 * - `document`: the raw text (YAML or JSON) or an already parsed value.
 * - `nodes`: every Node of the cluster, name → labels (selection and read-only parents are
 *   checked against them).
 * Returns the revision and, per node the snapshot names, its level values (read-only parents
 * the Node already carries included), or the first problem: a reason and a message naming the
 * node, level and value.
 */
export function validateSnapshot(
  source: TopologySource,
  document: unknown,
  nodes: ReadonlyMap<string, Labels> | Readonly<Record<string, Labels>>,
): SnapshotResult {
  const reject = (reason: SnapshotRejection, message: string): SnapshotResult => ({
    ok: false,
    reason,
    message,
  });
  const nodeLabels = (name: string): Labels | undefined =>
    nodes instanceof Map
      ? nodes.get(name)
      : Object.hasOwn(nodes, name)
        ? (nodes as Record<string, Labels>)[name]
        : undefined;

  let doc = document;
  if (typeof document === "string") {
    try {
      doc = parse(document);
    } catch (err) {
      return reject("InvalidSnapshot", `the snapshot is not valid YAML or JSON: ${(err as Error).message}`);
    }
  }
  if (!isRecord(doc)) return reject("InvalidSnapshot", "the snapshot must be an object");
  if (doc.apiVersion !== SNAPSHOT_API_VERSION) {
    return reject(
      "WrongAPIVersion",
      `apiVersion ${JSON.stringify(doc.apiVersion ?? null)}: expected ${SNAPSHOT_API_VERSION}`,
    );
  }
  if (typeof doc.revision !== "string" || doc.revision.trim() === "") {
    return reject("BlankRevision", "revision must be a non-empty string");
  }
  const revision = doc.revision;
  if (!isRecord(doc.nodes)) return reject("InvalidSnapshot", "nodes: expected a map of node name to levels");
  const entries: [string, Record<string, unknown>][] = [];
  for (const [node, rec] of Object.entries(doc.nodes)) {
    if (!isRecord(rec))
      return reject("InvalidSnapshot", `nodes.${node}: expected a map of level key to value`);
    entries.push([node, rec]);
  }

  const selector = compileSelector(source.nodeSelector, "spec.nodeSelector");
  if (!selector.ok) return reject("InvalidSelector", selector.error);
  for (const [node] of entries) {
    const labels = nodeLabels(node);
    if (!labels) return reject("UnselectedNode", `node ${node} is not a Node of the cluster`);
    if (!selector.selector.matches(labels)) {
      return reject(
        "UnselectedNode",
        `node ${node} is not selected by nodeSelector ${selector.selector.text}`,
      );
    }
  }

  const levels = normalizeLevels(source.levels);
  const declared = new Set(levels);
  for (const [node, rec] of entries) {
    for (const key of Object.keys(rec)) {
      if (!declared.has(key)) {
        return reject(
          "UndeclaredLevel",
          `node ${node}: key ${key} is not a declared level (levels: ${levels.join(", ")})`,
        );
      }
    }
  }

  for (const [node, rec] of entries) {
    for (const [key, value] of Object.entries(rec)) {
      const shown = typeof value === "string" ? value : JSON.stringify(value);
      if (READ_ONLY_PARENTS.includes(key)) {
        const actual = nodeLabels(node)![key];
        if (actual !== value) {
          return reject(
            "ForbiddenKey",
            `node ${node}: ${key}=${shown} is a read-only parent and must equal the Node's value ` +
              `(${actual === undefined ? "the Node has none" : actual})`,
          );
        }
      } else if (!mayPublish(key, source.additionalWritePrefix)) {
        return reject(
          "ForbiddenKey",
          `node ${node}: key ${key} may not be published by this source ` +
            `(allowed: ${writablePrefixes(source.additionalWritePrefix).join(", ")} and read-only ${READ_ONLY_PARENTS.join(", ")})`,
        );
      }
      const err = value === "" ? "must not be empty" : labelValueError(value);
      if (err) return reject("InvalidValue", `node ${node}: level ${key}=${shown}: ${err}`);
    }
  }

  // Effective values: what the Node will carry once the snapshot's labels are projected,
  // i.e. the snapshot plus cloud parents the Node already has for declared levels.
  const records: [string, Record<string, string>][] = entries.map(([node, rec]) => {
    const out: Record<string, string> = {};
    const labels = nodeLabels(node)!;
    for (const level of levels) {
      const v = rec[level] ?? (READ_ONLY_PARENTS.includes(level) ? labels[level] : undefined);
      if (typeof v === "string") out[level] = v;
    }
    return [node, out];
  });
  const problem = treeProblem(levels, records);
  if (problem) return reject(problem.reason, problem.message);
  return { ok: true, revision, nodes: new Map(records) };
}

/** Whether a writing source may publish `key` (read-only parents are handled apart). */
export function mayPublish(key: string, additionalWritePrefix?: string): boolean {
  if (key === PROFILE_LABEL) return false;
  return writablePrefixes(additionalWritePrefix).some((p) => key.startsWith(p) && key.length > p.length);
}

function writablePrefixes(additional?: string): string[] {
  return additional ? [OWN_PREFIX, additional.endsWith("/") ? additional : `${additional}/`] : [OWN_PREFIX];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
