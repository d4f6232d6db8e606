import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { validateSnapshot } from "./snapshot.js";
import { evaluateSource, lastValidInForce } from "./sources.js";
import type { Labels, TopologySource } from "./types.js";

const BLOCK = "topology.kubemoot.ai/block";
const RACK = "topology.kubemoot.ai/rack";
const ZONE = "topology.kubernetes.io/zone";

const source: TopologySource = {
  name: "fabric",
  nodeSelector: { matchLabels: { pool: "gpu" } },
  levels: [ZONE, BLOCK, RACK],
  arm: { kind: "configMap", namespace: "kubemoot", name: "fabric", key: "snapshot" },
};

const nodes = new Map<string, Labels>([
  ["n1", { pool: "gpu", [ZONE]: "z1" }],
  ["n2", { pool: "gpu", [ZONE]: "z1" }],
  ["n3", { pool: "gpu", [ZONE]: "z2" }],
  ["cpu", { pool: "cpu" }],
]);

function snap(nodesDoc: Record<string, Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  return { apiVersion: "topology.kubemoot.ai/v1alpha1", revision: "r1", nodes: nodesDoc, ...extra };
}

describe("validateSnapshot", () => {
  it("accepts a valid snapshot, with the Nodes' read-only zone filled in", () => {
    const r = validateSnapshot(
      source,
      snap({ n1: { [BLOCK]: "b1", [RACK]: "r1" }, n3: { [ZONE]: "z2", [BLOCK]: "b2" } }),
      nodes,
    );
    expect(r).toEqual({
      ok: true,
      revision: "r1",
      nodes: new Map([
        ["n1", { [ZONE]: "z1", [BLOCK]: "b1", [RACK]: "r1" }],
        ["n3", { [ZONE]: "z2", [BLOCK]: "b2" }],
      ]),
    });
  });

  it("reads YAML and JSON text alike", () => {
    const doc = snap({ n1: { [BLOCK]: "b1" } });
    const fromYaml = validateSnapshot(source, stringify(doc), nodes);
    const fromJson = validateSnapshot(source, JSON.stringify(doc), nodes);
    expect(fromYaml.ok).toBe(true);
    expect(fromJson).toEqual(fromYaml);
    expect(validateSnapshot(source, "nodes: [unclosed", nodes)).toMatchObject({
      ok: false,
      reason: "InvalidSnapshot",
    });
  });

  it.each([
    [
      "a wrong apiVersion",
      { ...snap({}), apiVersion: "v1" },
      "WrongAPIVersion",
      'apiVersion "v1": expected topology.kubemoot.ai/v1alpha1',
    ],
    [
      "a blank revision",
      snap({}, { revision: "  " }),
      "BlankRevision",
      "revision must be a non-empty string",
    ],
    [
      "a missing revision",
      snap({}, { revision: undefined }),
      "BlankRevision",
      "revision must be a non-empty string",
    ],
    [
      "an unselected node",
      snap({ cpu: { [BLOCK]: "b1" } }),
      "UnselectedNode",
      "node cpu is not selected by nodeSelector {pool: gpu}",
    ],
    [
      "an unknown node",
      snap({ ghost: { [BLOCK]: "b1" } }),
      "UnselectedNode",
      "node ghost is not a Node of the cluster",
    ],
    [
      "an undeclared level",
      snap({ n1: { "topology.kubemoot.ai/row": "x" } }),
      "UndeclaredLevel",
      `node n1: key topology.kubemoot.ai/row is not a declared level (levels: ${ZONE}, ${BLOCK}, ${RACK})`,
    ],
    [
      "an invalid value",
      snap({ n1: { [BLOCK]: "not a label!" } }),
      "InvalidValue",
      `node n1: level ${BLOCK}=not a label!: label value "not a label!": must be at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric`,
    ],
    [
      "an empty value",
      snap({ n1: { [BLOCK]: "" } }),
      "InvalidValue",
      `node n1: level ${BLOCK}=: must not be empty`,
    ],
    [
      "a number value",
      snap({ n1: { [BLOCK]: 7 } }),
      "InvalidValue",
      `node n1: level ${BLOCK}=7: label value 7: must be a string`,
    ],
    [
      "a read-only zone that differs from the Node's",
      snap({ n1: { [ZONE]: "z9", [BLOCK]: "b1" } }),
      "ForbiddenKey",
      `node n1: ${ZONE}=z9 is a read-only parent and must equal the Node's value (z1)`,
    ],
    [
      "a level without its parent",
      snap({ n1: { [RACK]: "r1" } }),
      "MissingParent",
      `node n1: level ${RACK}=r1 has no value for its parent level ${BLOCK}`,
    ],
    [
      "one value under two parent tuples",
      snap({ n1: { [BLOCK]: "b1", [RACK]: "r1" }, n2: { [BLOCK]: "b2", [RACK]: "r1" } }),
      "ConflictingParent",
      `level ${RACK}=r1 is under two parent tuples: [z1, b1] (node n1) and [z1, b2] (node n2)`,
    ],
  ])("rejects %s", (_, doc, reason, message) => {
    expect(validateSnapshot(source, doc, nodes)).toEqual({ ok: false, reason, message });
  });

  it("accepts the same value under the same parents on several nodes", () => {
    const r = validateSnapshot(
      source,
      snap({ n1: { [BLOCK]: "b1", [RACK]: "r1" }, n2: { [BLOCK]: "b1", [RACK]: "r1" } }),
      nodes,
    );
    expect(r.ok).toBe(true);
  });

  it("checks in the spec's order: an unselected node before an undeclared level before a bad key", () => {
    const all = {
      ghost: { x: "1" },
      n1: { "topology.kubemoot.ai/row": "x" },
      n2: { "example.com/rack": "r" },
    };
    expect(validateSnapshot(source, snap(all), nodes)).toMatchObject({ reason: "UnselectedNode" });
    const { ghost: _, ...rest } = all;
    expect(validateSnapshot(source, snap(rest), nodes)).toMatchObject({ reason: "UndeclaredLevel" });
  });

  it("refuses keys outside the writable prefixes, then allows the admin prefix", () => {
    const withAdmin: TopologySource = { ...source, levels: [BLOCK, "example.com/rack"] };
    const doc = snap({ n1: { [BLOCK]: "b1", "example.com/rack": "r1" } });
    expect(validateSnapshot(withAdmin, doc, nodes)).toEqual({
      ok: false,
      reason: "ForbiddenKey",
      message:
        "node n1: key example.com/rack may not be published by this source (allowed: topology.kubemoot.ai/ and read-only topology.kubernetes.io/region, topology.kubernetes.io/zone)",
    });
    const allowed = validateSnapshot({ ...withAdmin, additionalWritePrefix: "example.com/" }, doc, nodes);
    expect(allowed).toMatchObject({ ok: true, revision: "r1" });
  });

  it("never lets a source publish the generated profile label or Topograph's keys", () => {
    for (const key of ["topology.kubemoot.ai/profile", "fabric.topograph.run/tier-1"]) {
      const s: TopologySource = { ...source, levels: [key] };
      expect(validateSnapshot(s, snap({ n1: { [key]: "x" } }), nodes)).toMatchObject({
        reason: "ForbiddenKey",
      });
    }
  });

  it("rejects the whole snapshot: one bad node means no node is accepted", () => {
    const r = validateSnapshot(source, snap({ n1: { [BLOCK]: "b1" }, n2: { [BLOCK]: "-bad-" } }), nodes);
    expect(r.ok).toBe(false);
    expect("nodes" in r).toBe(false);
  });
});

describe("nodeLabels sources", () => {
  const labelSource: TopologySource = { ...source, levels: [BLOCK, RACK], arm: { kind: "nodeLabels" } };
  const inputs = (n: Map<string, Labels>) => ({ nodes: n, configMaps: new Map() });

  it("is Ready on a tree, a missing finer suffix included", () => {
    const s = evaluateSource(
      labelSource,
      inputs(
        new Map<string, Labels>([
          ["n1", { pool: "gpu", [BLOCK]: "b1", [RACK]: "r1" }],
          ["n2", { pool: "gpu", [BLOCK]: "b1" }],
        ]),
      ),
    );
    expect([s.ready, s.reason, s.selectedNodes]).toEqual([true, "Accepted", ["n1", "n2"]]);
  });

  it.each([
    [
      "a child without its parent",
      [["n1", { pool: "gpu", [RACK]: "r1" }]],
      `node n1: level ${RACK}=r1 has no value for its parent level ${BLOCK}`,
    ],
    [
      "a child under two parents",
      [
        ["n1", { pool: "gpu", [BLOCK]: "b1", [RACK]: "r1" }],
        ["n2", { pool: "gpu", [BLOCK]: "b2", [RACK]: "r1" }],
      ],
      `level ${RACK}=r1 is under two parent tuples: [b1] (node n1) and [b2] (node n2)`,
    ],
  ] as const)("is not Ready (InvalidHierarchy) with %s", (_, entries, message) => {
    const s = evaluateSource(labelSource, inputs(new Map(entries as unknown as [string, Labels][])));
    expect([s.ready, s.reason, s.message]).toEqual([false, "InvalidHierarchy", message]);
  });

  it("ignores nodes the selector does not pick", () => {
    const s = evaluateSource(labelSource, inputs(new Map([["c", { pool: "cpu", [RACK]: "r1" }]])));
    expect(s.ready).toBe(true);
  });
});

describe("inputs", () => {
  it("takes the Nodes as a Map or a plain record alike", () => {
    const doc = snap({ n1: { [BLOCK]: "b1" } });
    expect(validateSnapshot(source, doc, Object.fromEntries(nodes))).toEqual(
      validateSnapshot(source, doc, nodes),
    );
  });

  it("validates a webhook body the operator fetched; without one the source is not Ready", () => {
    const hook: TopologySource = {
      ...source,
      arm: { kind: "webhook", url: "https://inventory.example", pollInterval: "1m", timeout: "10s" },
    };
    const none = evaluateSource(hook, { nodes, configMaps: new Map() });
    expect([none.ready, none.reason]).toEqual([false, "SnapshotUnavailable"]);
    const fetched = evaluateSource(hook, {
      nodes,
      configMaps: new Map(),
      webhookBodies: new Map([["fabric", JSON.stringify(snap({ n1: { [BLOCK]: "b1" } }))]]),
    });
    expect([fetched.ready, fetched.revision, fetched.values.get("n1"), fetched.values.get("n3")]).toEqual([
      true,
      "r1",
      { [ZONE]: "z1", [BLOCK]: "b1" },
      { [ZONE]: "z2" },
    ]);
  });
});

describe("configMap sources", () => {
  it("is not Ready when the ConfigMap or key is missing, or the snapshot is invalid", () => {
    const none = evaluateSource(source, { nodes, configMaps: new Map() });
    expect([none.ready, none.reason, none.message]).toEqual([
      false,
      "SnapshotUnavailable",
      "ConfigMap kubemoot/fabric not found",
    ]);
    const noKey = evaluateSource(source, { nodes, configMaps: new Map([["kubemoot/fabric", {}]]) });
    expect(noKey.message).toBe("ConfigMap kubemoot/fabric has no key snapshot");
    const bad = evaluateSource(source, {
      nodes,
      configMaps: new Map([["kubemoot/fabric", { snapshot: stringify(snap({}, { revision: "" })) }]]),
    });
    expect([bad.ready, bad.reason]).toEqual([false, "BlankRevision"]);
  });
});

describe("maxStaleness", () => {
  it("keeps the last valid snapshot through read failures until maxStaleness has passed", () => {
    const at = Date.parse("2026-11-30T12:00:00Z");
    expect(lastValidInForce(at, "1h", at + 59 * 60_000)).toBe(true);
    expect(lastValidInForce(at, "1h", at + 60 * 60_000)).toBe(false);
    expect(lastValidInForce(at, "1h30m", at + 80 * 60_000)).toBe(true);
    expect(lastValidInForce(at, undefined, at + 1e9)).toBe(true);
  });
});
