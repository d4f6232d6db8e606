// The TopologySource CRD: structural, cluster-scoped, and it accepts the example source while
// rejecting what the manifest reader rejects.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { type Schema, structuralErrors, validate } from "../binding/openapi.js";

const ROOT = join(import.meta.dirname, "..", "..");
const crd = parse(readFileSync(join(ROOT, "chart", "crds", "kubemoot.ai_topologysources.yaml"), "utf8"));
const version = crd.spec.versions[0];
const schema = version.schema.openAPIV3Schema as Schema;

describe("TopologySource CRD", () => {
  it("is a structural, cluster-scoped kubemoot.ai/v1alpha1 kind with status and printer columns", () => {
    expect([crd.metadata.name, crd.spec.group, crd.spec.scope, crd.spec.names.kind]).toEqual([
      "topologysources.kubemoot.ai",
      "kubemoot.ai",
      "Cluster",
      "TopologySource",
    ]);
    expect(version.subresources).toEqual({ status: {} });
    expect(version.additionalPrinterColumns.at(-1)).toEqual({
      name: "Age",
      type: "date",
      jsonPath: ".metadata.creationTimestamp",
    });
    expect(structuralErrors(schema)).toEqual([]);
  });

  it("accepts the example source", () => {
    const docs = parseAllDocuments(
      readFileSync(join(ROOT, "examples", "topology", "source.yaml"), "utf8"),
    ).map((d) => d.toJS());
    const source = docs.find((d) => d.kind === "TopologySource");
    expect(validate(schema, source)).toEqual([]);
  });

  it("rejects no levels, a bad prefix and a plain-http webhook", () => {
    const base = { apiVersion: "kubemoot.ai/v1alpha1", kind: "TopologySource", metadata: { name: "s" } };
    const spec = { nodeSelector: {}, levels: ["a.io/x"], nodeLabels: {} };
    expect(validate(schema, { ...base, spec: { ...spec, levels: [] } })).not.toEqual([]);
    expect(
      validate(schema, { ...base, spec: { ...spec, additionalWritePrefix: "Example.com" } }),
    ).not.toEqual([]);
    const webhook = { url: "http://inv", pollInterval: "30s", timeout: "5s" };
    expect(
      validate(schema, { ...base, spec: { nodeSelector: {}, levels: ["a.io/x"], webhook } }),
    ).not.toEqual([]);
  });
});

// The fleet's ModelDeployment CRD (another reader's kind): the joint-admission fixture must be a
// document a cluster would accept.
const MD_CRD = join(ROOT, "chart", "crds", "kubemoot.ai_modeldeployments.yaml");
describe.skipIf(!existsSync(MD_CRD))("the ModelDeployment fixture", () => {
  it("passes the ModelDeployment CRD", () => {
    const md = parse(readFileSync(MD_CRD, "utf8"));
    const docs = parseAllDocuments(
      readFileSync(join(ROOT, "test", "topology", "deployment", "manifests.yaml"), "utf8"),
    ).map((d) => d.toJS());
    const deployment = docs.find((d) => d.kind === "ModelDeployment");
    expect(validate(md.spec.versions[0].schema.openAPIV3Schema as Schema, deployment)).toEqual([]);
  });
});
