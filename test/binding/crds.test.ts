// The CRDs under chart/crds/: well-formed, structural, with printer columns and status
// subresources; every kubemoot.ai document we ship (examples, the consent-3 archetype) passes
// them; and documents they reject, the manifest reader rejects too.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { CONSENT_3 } from "../../src/binding/index.js";
import { manifestFiles } from "../../src/manifests/index.js";
import { parseManifests } from "../../src/operator/manifests/index.js";
import { type Schema, structuralErrors, validate } from "./openapi.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CRD_DIR = join(ROOT, "chart", "crds");

interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular: string; listKind: string; shortNames?: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns?: { name: string; type: string; jsonPath: string }[];
      schema: { openAPIV3Schema: Schema };
    }[];
  };
}

const files = readdirSync(CRD_DIR)
  .filter((f) => f.endsWith(".yaml"))
  .sort();
const crds = new Map<string, Crd>(
  files.map((f) => {
    const crd = parse(readFileSync(join(CRD_DIR, f), "utf8")) as Crd;
    return [crd.spec.names.kind, crd];
  }),
);

function schemaOf(kind: string): Schema {
  const crd = crds.get(kind);
  if (!crd) throw new Error(`no CRD for ${kind}`);
  return crd.spec.versions[0]!.schema.openAPIV3Schema;
}

describe("CRD files", () => {
  it("one file per kind", () => {
    expect(files).toEqual([
      "kubemoot.ai_agents.yaml",
      "kubemoot.ai_crewschedulingpolicies.yaml",
      "kubemoot.ai_inferenceclasses.yaml",
      "kubemoot.ai_inferenceclusters.yaml",
      "kubemoot.ai_modeldeployments.yaml",
      "kubemoot.ai_modelproviders.yaml",
      "kubemoot.ai_modelreplicas.yaml",
      "kubemoot.ai_models.yaml",
      "kubemoot.ai_mootarchetypes.yaml",
      "kubemoot.ai_topologysources.yaml",
    ]);
  });

  it.each([
    ["Model", "Namespaced"],
    ["ModelProvider", "Namespaced"],
    ["Agent", "Namespaced"],
    ["CrewSchedulingPolicy", "Namespaced"],
    ["MootArchetype", "Cluster"],
    ["TopologySource", "Cluster"],
    ["ModelDeployment", "Namespaced"],
    ["InferenceCluster", "Cluster"],
    ["InferenceClass", "Cluster"],
    ["ModelReplica", "Namespaced"],
  ])(
    "%s: kubemoot.ai/v1alpha1, %s, status subresource, printer columns, structural schema",
    (kind, scope) => {
      const crd = crds.get(kind)!;
      expect(crd.apiVersion).toBe("apiextensions.k8s.io/v1");
      expect(crd.kind).toBe("CustomResourceDefinition");
      expect(crd.spec.group).toBe("kubemoot.ai");
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.kubemoot.ai`);
      expect(crd.spec.names.singular).toBe(kind.toLowerCase());
      expect(crd.spec.names.listKind).toBe(`${kind}List`);
      expect(crd.spec.scope).toBe(scope);
      expect(crd.spec.versions).toHaveLength(1);
      const v = crd.spec.versions[0]!;
      expect([v.name, v.served, v.storage]).toEqual(["v1alpha1", true, true]);
      expect(v.subresources).toEqual({ status: {} });
      const columns = v.additionalPrinterColumns ?? [];
      expect(columns.length).toBeGreaterThan(1);
      expect(columns.at(-1)).toEqual({ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" });
      for (const c of columns) expect(["string", "integer", "boolean", "date", "number"]).toContain(c.type);
      expect(structuralErrors(v.schema.openAPIV3Schema)).toEqual([]);
      // An InferenceCluster is mostly what its cluster agent publishes (status); spec only has taints.
      if (kind !== "InferenceCluster") expect(v.schema.openAPIV3Schema.required).toContain("spec");
    },
  );
});

describe("documents we ship pass the CRDs", () => {
  it("every kubemoot.ai document under examples/ and chart/templates/", async () => {
    const paths = await manifestFiles([join(ROOT, "examples"), join(ROOT, "chart", "templates")]);
    let checked = 0;
    for (const file of paths) {
      for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
        const value = doc.toJS() as { apiVersion?: string; kind?: string } | null;
        if (!value?.apiVersion?.startsWith("kubemoot.ai/")) continue;
        expect(value.apiVersion).toBe("kubemoot.ai/v1alpha1");
        expect([file, validate(schemaOf(value.kind!), value)]).toEqual([file, []]);
        checked++;
      }
    }
    // dev 2 + prod 7 (one an embedding model) + mixed 7 + real 6 + crew 5 + consent-3 1 +
    // topology 1 + fleet 10
    expect(checked).toBe(39);
  });

  it("the chart's consent-3 is the binder's built-in archetype", () => {
    const doc = parse(readFileSync(join(ROOT, "chart", "templates", "consent-3-archetype.yaml"), "utf8"));
    expect({ name: doc.metadata.name, spec: doc.spec }).toEqual(CONSENT_3);
    const { set, issues } = parseManifests([
      {
        file: "consent-3.yaml",
        text: readFileSync(join(ROOT, "chart", "templates", "consent-3-archetype.yaml"), "utf8"),
      },
    ]);
    expect(issues).toEqual([]);
    expect(set.archetypes).toEqual([CONSENT_3]);
  });
});

describe("the CRDs and the manifest reader agree", () => {
  const model = (spec: object) => ({
    apiVersion: "kubemoot.ai/v1alpha1",
    kind: "Model",
    metadata: { name: "m" },
    spec,
  });
  const provider = (spec: object, status: object = {}) => ({
    apiVersion: "kubemoot.ai/v1alpha1",
    kind: "ModelProvider",
    metadata: { name: "p" },
    spec,
    status,
  });
  const policy = (spec: object) => ({
    apiVersion: "kubemoot.ai/v1alpha1",
    kind: "CrewSchedulingPolicy",
    metadata: { name: "pol", namespace: "crew" },
    spec,
  });
  const agent = (spec: object) => ({
    apiVersion: "kubemoot.ai/v1alpha1",
    kind: "Agent",
    metadata: { name: "a" },
    spec,
  });
  const archetype = (spec: object) => ({
    apiVersion: "kubemoot.ai/v1alpha1",
    kind: "MootArchetype",
    metadata: { name: "a" },
    spec,
  });
  const ollama = { type: "ollama", endpoint: "http://p:11434" };

  it.each<[string, { kind: string }]>([
    ["Model without providerRef", model({ model: "x" })],
    ["negative vramMib", model({ model: "x", providerRef: "p", vramMib: -1 })],
    ["vramMib as text", model({ model: "x", providerRef: "p", vramMib: "20GiB" })],
    ["empty model id", model({ model: "", providerRef: "p" })],
    ["providerRef with capitals", model({ model: "x", providerRef: "Ollama-A" })],
    ["engine type", provider({ type: "vllm", endpoint: "http://p" })],
    ["unknown engine", provider({ ...ollama, engine: "tgi" })],
    ["engine as a number", provider({ ...ollama, engine: 1 })],
    ["endpoint without scheme", provider({ type: "ollama", endpoint: "ollama-a:11434" })],
    ["endpoint with spaces", provider({ type: "ollama", endpoint: "http://a b" })],
    ["negative weight", provider({ ...ollama, scheduling: { weight: -1 } })],
    ["fractional weight", provider({ ...ollama, scheduling: { weight: 2.5 } })],
    ["negative vramTotalMiB", provider(ollama, { capacity: { vramTotalMiB: -1 } })],
    ["loaded model without name", provider(ollama, { capacity: { loadedModels: [{ sizeMiB: 1 }] } })],
    ["ready as text", provider(ollama, { ready: "true" })],
    ["policy without crewRef", policy({ rules: [] })],
    ["rule without phase", policy({ crewRef: "c", rules: [{}] })],
    [
      "prefer without weight",
      policy({ crewRef: "c", rules: [{ phase: "mulling", prefer: [{ selector: {} }] }] }),
    ],
    [
      "prefer without selector",
      policy({ crewRef: "c", rules: [{ phase: "mulling", prefer: [{ weight: 1 }] }] }),
    ],
    [
      "negative prefer weight",
      policy({ crewRef: "c", rules: [{ phase: "mulling", prefer: [{ weight: -1, selector: {} }] }] }),
    ],
    ["quality bias as a number", policy({ crewRef: "c", qualityBias: { reasoning: 0.7 } })],
    [
      "matchLabels value not a string",
      policy({ crewRef: "c", rules: [{ phase: "m", require: { matchLabels: { a: true } } }] }),
    ],
    [
      "expression without operator",
      policy({ crewRef: "c", rules: [{ phase: "m", require: { matchExpressions: [{ key: "a" }] } }] }),
    ],
    ["whenUnsatisfiable", policy({ crewRef: "c", topologySpread: { whenUnsatisfiable: "Maybe" } })],
    ["archetype without phases", archetype({ phases: [] })],
    ["archetype phase twice", archetype({ phases: [{ name: "a" }, { name: "a" }] })],
  ])("%s: rejected by both", (_name, doc) => {
    expect(validate(schemaOf(doc.kind), doc)).not.toEqual([]);
    const { issues } = parseManifests([{ file: "x.yaml", text: JSON.stringify(doc) }]);
    expect(issues).not.toEqual([]);
  });

  it.each<[string, { kind: string }]>([
    [
      "an unknown selector operator (reported on the policy by the binder)",
      policy({
        crewRef: "c",
        rules: [{ phase: "mulling", require: { matchExpressions: [{ key: "a", operator: "Gt" }] } }],
      }),
    ],
    [
      "a quality bias outside [0, 1] (ignored by the binder)",
      policy({ crewRef: "c", qualityBias: { reasoning: "1.5" } }),
    ],
    ["an unknown phase (reported on the policy)", policy({ crewRef: "c", rules: [{ phase: "pondering" }] })],
    ["runtime fields on an Agent", agent({ capabilities: ["x"], promptRefs: ["p"], enabledTools: ["t"] })],
    ["zero weight and zero VRAM", provider({ ...ollama, scheduling: { weight: 0, memoryMiB: 0 } })],
    ...["ollama", "vllm", "llamacpp", "sglang", "openai"].map((engine): [string, { kind: string }] => [
      `engine ${engine}`,
      provider({ ...ollama, engine }),
    ]),
  ])("%s: accepted by both", (_name, doc) => {
    expect(validate(schemaOf(doc.kind), doc)).toEqual([]);
    const { issues } = parseManifests([{ file: "x.yaml", text: JSON.stringify(doc) }]);
    expect(issues).toEqual([]);
  });
});
