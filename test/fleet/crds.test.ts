// The fleet's CRDs under chart/crds/: structural, with the spec's ranges; examples/fleet passes
// them; and documents they reject, the fleet's manifest parser rejects too.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { parseFleetDocuments, placeFleet, replicaObject } from "../../src/fleet/index.js";
import { manifestFiles } from "../../src/manifests/index.js";
import { type Schema, structuralErrors, validate } from "../binding/openapi.js";

const ROOT = join(import.meta.dirname, "..", "..");
const KINDS = [
  ["ModelDeployment", "modeldeployments", "Namespaced"],
  ["InferenceCluster", "inferenceclusters", "Cluster"],
  ["InferenceClass", "inferenceclasses", "Cluster"],
  ["ModelReplica", "modelreplicas", "Namespaced"],
] as const;

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular: string; listKind: string };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: object;
      additionalPrinterColumns?: { name: string; type: string; jsonPath: string }[];
      schema: { openAPIV3Schema: Schema };
    }[];
  };
}

const crds = new Map(
  KINDS.map(([kind, plural]) => [
    kind,
    parse(readFileSync(join(ROOT, "chart", "crds", `kubemoot.ai_${plural}.yaml`), "utf8")) as Crd,
  ]),
);
const schemaOf = (kind: string) =>
  crds.get(kind as (typeof KINDS)[number][0])!.spec.versions[0]!.schema.openAPIV3Schema;

/** The sub-schema at a dotted path; `[]` steps into array items. */
function at(schema: Schema, path: string): Schema {
  let s = schema;
  for (const step of path.split(".")) {
    s = step === "[]" ? s.items! : s.properties![step]!;
    if (!s) throw new Error(`no schema at ${path}`);
  }
  return s;
}

describe("fleet CRDs", () => {
  it.each(KINDS)(
    "%s: kubemoot.ai/v1alpha1 %s, status subresource, columns, structural",
    (kind, plural, scope) => {
      const crd = crds.get(kind)!;
      expect(crd.metadata.name).toBe(`${plural}.kubemoot.ai`);
      expect(crd.spec.group).toBe("kubemoot.ai");
      expect(crd.spec.scope).toBe(scope);
      expect(crd.spec.names).toMatchObject({
        kind,
        plural,
        singular: kind.toLowerCase(),
        listKind: `${kind}List`,
      });
      const v = crd.spec.versions[0]!;
      expect([v.name, v.served, v.storage, v.subresources]).toEqual(["v1alpha1", true, true, { status: {} }]);
      expect(v.additionalPrinterColumns!.at(-1)).toEqual({
        name: "Age",
        type: "date",
        jsonPath: ".metadata.creationTimestamp",
      });
      expect(structuralErrors(v.schema.openAPIV3Schema)).toEqual([]);
    },
  );

  it.each([
    ["ModelDeployment", "spec.replicas", 1, 10],
    ["ModelDeployment", "spec.template.spec.engines.[].copies", 1, 64],
    ["ModelDeployment", "spec.template.spec.engines.[].members.[].worker.nodes", 1, 63],
    ["ModelDeployment", "spec.template.spec.engines.[].members.[].nodeSelector.devices.[].count", 1, 64],
    ["ModelReplica", "spec.engines.[].members.[].worker.nodes", 1, 63],
  ])("%s %s is in %d..%d", (kind, path, min, max) => {
    expect(at(schemaOf(kind), path)).toMatchObject({ type: "integer", minimum: min, maximum: max });
  });

  it.each([
    ["ModelDeployment", "spec.template.spec.engines", 1, 8],
    ["ModelDeployment", "spec.template.spec.engines.[].members.[].nodeSelector.devices", 1, 16],
  ])("%s %s has %d..%d items", (kind, path, min, max) => {
    expect(at(schemaOf(kind), path)).toMatchObject({ type: "array", minItems: min, maxItems: max });
  });

  it("InferenceCluster publishes at most 8 pools", () => {
    expect(at(schemaOf("InferenceCluster"), "status.gpuPools")).toMatchObject({ maxItems: 8 });
  });

  it("every document under examples/fleet passes its CRD and the parser", async () => {
    const files = await manifestFiles([join(ROOT, "examples", "fleet")]);
    let checked = 0;
    const docs = [];
    for (const file of files) {
      for (const [i, doc] of parseAllDocuments(readFileSync(file, "utf8")).entries()) {
        const value = doc.toJS() as { kind: string };
        expect([file, validate(schemaOf(value.kind), value)]).toEqual([file, []]);
        docs.push({ file, document: i + 1, value });
        checked++;
      }
    }
    expect(checked).toBe(10);
    expect(parseFleetDocuments(docs).issues).toEqual([]);
  });

  it("the ModelReplicas placeFleet emits for examples/fleet pass the CRD and parse back", async () => {
    const files = await manifestFiles([join(ROOT, "examples", "fleet")]);
    const docs = files.flatMap((file) =>
      parseAllDocuments(readFileSync(file, "utf8")).map((d, i) => ({
        file,
        document: i + 1,
        value: d.toJS(),
      })),
    );
    const result = placeFleet(parseFleetDocuments(docs).input);
    const emitted = result.deployments.flatMap((d) => d.replicas);
    expect(emitted).toHaveLength(6);
    const objects = emitted.map(replicaObject);
    for (const o of objects) expect(validate(schemaOf("ModelReplica"), o)).toEqual([]);
    const back = parseFleetDocuments(
      objects.map((value, i) => ({ file: "emitted", document: i + 1, value })),
    );
    expect(back.issues).toEqual([]);
    expect(back.input.replicas.map((r) => `${r.namespace}/${r.name} ${r.clusterName}/${r.index}`)).toEqual(
      emitted.map((r) => `${r.namespace}/${r.name} ${r.clusterName}/${r.index}`),
    );
  });

  it.each<[string, object]>([
    ["an unknown role", { role: "Boss", nodeSelector: { devices: [{ name: "g" }] } }],
    ["a request without name", { role: "Standalone", nodeSelector: { devices: [{ count: 1 }] } }],
    ["an empty device list", { role: "Standalone", nodeSelector: { devices: [] } }],
    [
      "a selector without cel",
      { role: "Standalone", nodeSelector: { devices: [{ name: "g", selectors: [{}] }] } },
    ],
  ])("a member with %s: rejected by both", (_, member) => {
    const value = {
      apiVersion: "kubemoot.ai/v1alpha1",
      kind: "ModelDeployment",
      metadata: { name: "d", namespace: "n" },
      spec: { replicas: 1, template: { spec: { engines: [{ name: "main", members: [member] }] } } },
    };
    expect(validate(schemaOf("ModelDeployment"), value)).not.toEqual([]);
    expect(parseFleetDocuments([{ file: "f", document: 1, value }]).issues).not.toEqual([]);
  });
});
