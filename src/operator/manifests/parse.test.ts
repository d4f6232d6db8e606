import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { formatIssue, manifestError } from "../../manifests/index.js";
import { parseManifests, toSnapshot } from "./parse.js";

function parse(text: string, file = "m.yaml") {
  return parseManifests([{ file, text }]);
}

function messages(text: string): string[] {
  return parse(text).issues.map(formatIssue);
}

const ALL_KINDS = `
apiVersion: kubemoot.ai/v1alpha1
kind: Model
metadata:
  name: qwen3-32b
  namespace: kubemoot
  labels:
    family: qwen3
    params: "32B"
    capability/tool-calling: "true"
    latencyClass: high
spec:
  model: qwen3:32b
  providerRef: ollama-a
  vramMib: 20480
---
apiVersion: kubemoot.ai/v1alpha1
kind: ModelProvider
metadata: { name: ollama-a, namespace: kubemoot, labels: { rack: r1 } }
spec:
  type: ollama
  endpoint: http://ollama-a.kubemoot:11434
  scheduling: { weight: 100, memoryMiB: 32768 }
status:
  ready: true
  capacity:
    vramTotalMiB: 32605
    maxParallel: 2
    agentCount: 0
    loadedModels: [{ name: "qwen3:32b", sizeMiB: 21504, contextLength: 8192 }]
---
apiVersion: kubemoot.ai/v1alpha1
kind: Agent
metadata: { name: synthesizer, labels: { kubemoot.ai/crew: homelab } }
spec:
  capabilities: [reasoning, synthesis]
  discussRole: coordinator
  promptRefs: [discussion-protocol]
status:
  scheduling: { model: "qwen3:32b", modelRef: qwen3-32b, provider: ollama-a, endpoint: "http://x",
                triage: { model: "qwen3:8b", provider: ollama-b, endpoint: "http://y" } }
---
apiVersion: kubemoot.ai/v1alpha1
kind: CrewSchedulingPolicy
metadata: { name: homelab-default, namespace: crew-homelab }
spec:
  crewRef: homelab
  qualityBias: { reasoning: "0.7", default: "abc" }
  rules:
    - phase: mulling
      require:
        matchLabels: { capability/tool-calling: "true" }
        matchExpressions: [{ key: params, operator: Gt, values: ["14B"] }]
      prefer:
        - weight: 100
          selector: { matchLabels: { params: "32B" } }
  topologySpread: { whenUnsatisfiable: DoNotSchedule }
---
apiVersion: kubemoot.ai/v1alpha1
kind: MootArchetype
metadata: { name: debate-2, namespace: ignored }
spec:
  phases: [{ name: mulling, description: "think" }, { name: triage }]
`;

describe("parseManifests: the five kinds", () => {
  const { set, issues } = parse(ALL_KINDS);

  it("has no issues (an invalid selector operator is the binder's to report)", () => {
    expect(issues).toEqual([]);
  });

  it("reads a Model", () => {
    expect(set.models).toEqual([
      {
        namespace: "kubemoot",
        name: "qwen3-32b",
        labels: { family: "qwen3", params: "32B", "capability/tool-calling": "true", latencyClass: "high" },
        spec: { model: "qwen3:32b", providerRef: "ollama-a", vramMib: 20480 },
        status: { ready: true },
      },
    ]);
  });

  it("reads a ModelProvider with its capacity", () => {
    expect(set.providers[0]).toEqual({
      namespace: "kubemoot",
      name: "ollama-a",
      labels: { rack: "r1" },
      spec: {
        type: "ollama",
        endpoint: "http://ollama-a.kubemoot:11434",
        scheduling: { weight: 100, memoryMiB: 32768 },
      },
      status: {
        ready: true,
        capacity: {
          vramTotalMiB: 32605,
          maxParallel: 2,
          agentCount: 0,
          loadedModels: [{ name: "qwen3:32b", sizeMiB: 21504, contextLength: 8192 }],
        },
      },
    });
  });

  it("reads a ModelProvider's engine (absent stays absent: ollama)", () => {
    const doc = (engine: string) =>
      `apiVersion: kubemoot.ai/v1alpha1\nkind: ModelProvider\nmetadata: { name: v }\nspec: { type: ollama, engine: ${engine}, endpoint: "http://v:8000" }\n`;
    for (const engine of ["vllm", "llamacpp", "sglang", "openai", "ollama"]) {
      const { set: s, issues } = parseManifests([{ file: "v.yaml", text: doc(engine) }]);
      expect(issues).toEqual([]);
      expect(s.providers[0]?.spec).toEqual({ type: "ollama", engine, endpoint: "http://v:8000" });
    }
  });

  it("reads an Agent (namespace defaults to default; its current binding is kept for hysteresis)", () => {
    expect(set.agents[0]).toEqual({
      namespace: "default",
      name: "synthesizer",
      labels: { "kubemoot.ai/crew": "homelab" },
      spec: { capabilities: ["reasoning", "synthesis"], discussRole: "coordinator" },
      status: {
        scheduling: {
          model: "qwen3:32b",
          modelRef: "qwen3-32b",
          provider: "ollama-a",
          endpoint: "http://x",
          triage: { model: "qwen3:8b", provider: "ollama-b", endpoint: "http://y" },
        },
      },
    });
  });

  it("reads a CrewSchedulingPolicy with defaults (archetype consent-3, spread key provider on both phases)", () => {
    expect(set.policies[0]).toEqual({
      namespace: "crew-homelab",
      name: "homelab-default",
      spec: {
        crewRef: "homelab",
        archetypeRef: "consent-3",
        qualityBias: { reasoning: "0.7", default: "abc" },
        rules: [
          {
            phase: "mulling",
            require: {
              matchLabels: { "capability/tool-calling": "true" },
              matchExpressions: [{ key: "params", operator: "Gt", values: ["14B"] }],
            },
            prefer: [{ weight: 100, selector: { matchLabels: { params: "32B" } } }],
          },
        ],
        topologySpread: {
          whenUnsatisfiable: "DoNotSchedule",
          topologyKey: "provider",
          phaseKeys: ["mulling", "triage"],
        },
      },
    });
  });

  it("reads a cluster-scoped MootArchetype (a namespace is ignored)", () => {
    expect(set.archetypes).toEqual([
      { name: "debate-2", spec: { phases: [{ name: "mulling", description: "think" }, { name: "triage" }] } },
    ]);
  });

  it("a Model or provider without namespace is cluster scope; without status it is ready", () => {
    const { set: s } = parse(`
apiVersion: kubemoot.ai/v1alpha1
kind: ModelProvider
metadata: { name: cpu }
spec: { type: ollama, endpoint: "https://cpu.example:443/ollama" }
`);
    expect(s.providers[0]).toEqual({
      name: "cpu",
      labels: {},
      spec: { type: "ollama", endpoint: "https://cpu.example:443/ollama" },
      status: { ready: true },
    });
  });
});

describe("parseManifests: other documents", () => {
  it("skips other API groups and empty documents", () => {
    const { set, issues } = parse(
      "---\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\napiVersion: apps/v1\nkind: Deployment\n",
    );
    expect(issues).toEqual([]);
    expect(set.skipped).toEqual([
      { file: "m.yaml", document: 2, apiVersion: "v1", kind: "Namespace" },
      { file: "m.yaml", document: 3, apiVersion: "apps/v1", kind: "Deployment" },
    ]);
  });

  it("skips our group's kinds that other readers own (fleet, topology), still rejects unknown ones", () => {
    const { set, issues } = parse(
      "apiVersion: kubemoot.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: d}\n---\napiVersion: kubemoot.ai/v1alpha1\nkind: TopologySource\nmetadata: {name: t}\n---\napiVersion: kubemoot.ai/v1alpha1\nkind: Gadget\nmetadata: {name: g}\n",
    );
    expect(set.skipped.map((s) => s.kind)).toEqual(["ModelDeployment", "TopologySource"]);
    expect(issues.map((i) => i.message).join("\n")).toMatch(/unknown kind "Gadget"/);
  });

  it.each([
    [
      "keyed by provider",
      `{"ollama-a": {"ready": true, "totalVramMiB": 32605}, "ollama-b": {"name": "ollama-b"}}`,
    ],
    ["a list", `[{"name": "ollama-a", "ready": true, "totalVramMiB": 32605}, {"name": "ollama-b"}]`],
  ])("reads provider state documents: %s", (_name, text) => {
    const { set, issues } = parse(text, "state.json");
    expect(issues).toEqual([]);
    expect(set.providerStates.map((s) => [s.name, s.ready, s.totalVramMiB, s.maxParallel])).toEqual([
      ["ollama-a", true, 32605, 0],
      ["ollama-b", false, 0, 0],
    ]);
  });

  it("reads the single-slot models of a provider state document", () => {
    const { set, issues } = parse(
      `{"ollama-a": {"singleSlotModels": ["nomic-embed-text:latest"]}, "ollama-b": {"singleSlotModels": []}}`,
      "state.json",
    );
    expect(issues).toEqual([]);
    expect(set.providerStates.map((s) => s.singleSlotModels)).toEqual([
      ["nomic-embed-text:latest"],
      undefined,
    ]);
  });

  it("toSnapshot overlays provider state onto providers", () => {
    const { set } = parse(`
apiVersion: kubemoot.ai/v1alpha1
kind: ModelProvider
metadata: { name: ollama-a }
spec: { type: ollama, endpoint: "http://a:11434" }
status: { ready: true, capacity: { vramTotalMiB: 1000 } }
---
{"ollama-a": {"ready": false, "totalVramMiB": 24563}}
`);
    const [p] = toSnapshot(set).providers;
    expect(p?.status.ready).toBe(false);
    expect(p?.status.capacity?.vramTotalMiB).toBe(24563);
    const [q] = toSnapshot(set, [{ ...set.providerStates[0]!, ready: true }]).providers;
    expect(q?.status.ready).toBe(true);
  });
});

describe("parseManifests: errors name the file, document, object and field", () => {
  const model = (spec: string, meta = "{ name: m, namespace: kubemoot }") =>
    `apiVersion: kubemoot.ai/v1alpha1\nkind: Model\nmetadata: ${meta}\nspec: ${spec}\n`;
  const provider = (spec: string, status = "{}") =>
    `apiVersion: kubemoot.ai/v1alpha1\nkind: ModelProvider\nmetadata: { name: p }\nspec: ${spec}\nstatus: ${status}\n`;
  const policy = (spec: string) =>
    `apiVersion: kubemoot.ai/v1alpha1\nkind: CrewSchedulingPolicy\nmetadata: { name: pol, namespace: crew }\nspec: ${spec}\n`;

  it.each<[string, string, string]>([
    [
      "missing providerRef",
      model("{ model: x }"),
      "m.yaml (document 1, Model kubemoot/m): spec.providerRef: required",
    ],
    [
      "vramMib not a number",
      model("{ model: x, providerRef: p, vramMib: lots }"),
      'm.yaml (document 1, Model kubemoot/m): spec.vramMib: expected an integer ≥ 0, got "lots"',
    ],
    [
      "negative vramMib",
      model("{ model: x, providerRef: p, vramMib: -1 }"),
      "m.yaml (document 1, Model kubemoot/m): spec.vramMib: expected an integer ≥ 0, got number -1",
    ],
    [
      "missing spec",
      "apiVersion: kubemoot.ai/v1alpha1\nkind: Model\nmetadata: { name: m }\n",
      "m.yaml (document 1, Model m): spec: required",
    ],
    [
      "unquoted label value",
      model("{ model: x, providerRef: p }", "{ name: m, labels: { capability/tool-calling: true } }"),
      'm.yaml (document 1, Model m): metadata.labels["capability/tool-calling"]: expected a string, got boolean true (quote it)',
    ],
    [
      "invalid label value",
      model("{ model: x, providerRef: p }", '{ name: m, labels: { params: "14B|32B" } }'),
      'm.yaml (document 1, Model m): metadata.labels["params"]: label value "14B|32B": must be at most 63 alphanumerics',
    ],
    [
      "latencyClass outside the enum",
      model("{ model: x, providerRef: p }", "{ name: m, labels: { latencyClass: fast } }"),
      'm.yaml (document 1, Model m): metadata.labels["latencyClass"]: expected one of low, medium, high, got "fast"',
    ],
    [
      "bad name",
      model("{ model: x, providerRef: p }", "{ name: Bad_Name }"),
      'm.yaml (document 1, Model Bad_Name): metadata.name: "Bad_Name" is not a DNS subdomain',
    ],
    [
      "no metadata",
      "apiVersion: kubemoot.ai/v1alpha1\nkind: Model\nspec: {}\n",
      "m.yaml (document 1, Model): metadata: required",
    ],
    [
      "provider type",
      provider("{ type: vllm, endpoint: 'http://p:8000' }"),
      'm.yaml (document 1, ModelProvider p): spec.type: expected one of ollama, got "vllm"',
    ],
    [
      "provider engine",
      provider("{ type: ollama, engine: tgi, endpoint: 'http://p:8000' }"),
      'm.yaml (document 1, ModelProvider p): spec.engine: expected one of ollama, vllm, llamacpp, sglang, openai, got "tgi"',
    ],
    [
      "endpoint not a URL",
      provider("{ type: ollama, endpoint: 'ollama-a:11434' }"),
      'm.yaml (document 1, ModelProvider p): spec.endpoint: "ollama-a:11434" is not an http:// or https:// URL',
    ],
    [
      "negative weight",
      provider("{ type: ollama, endpoint: 'http://p', scheduling: { weight: -5 } }"),
      "m.yaml (document 1, ModelProvider p): spec.scheduling.weight: expected an integer ≥ 0, got number -5",
    ],
    [
      "fractional maxParallel",
      provider("{ type: ollama, endpoint: 'http://p' }", "{ capacity: { maxParallel: 1.5 } }"),
      "m.yaml (document 1, ModelProvider p): status.capacity.maxParallel: expected an integer ≥ 0, got number 1.5",
    ],
    [
      "ready as a string",
      provider("{ type: ollama, endpoint: 'http://p' }", '{ ready: "yes" }'),
      'm.yaml (document 1, ModelProvider p): status.ready: expected true or false, got "yes"',
    ],
    [
      "loaded model without a name",
      provider("{ type: ollama, endpoint: 'http://p' }", "{ capacity: { loadedModels: [{ sizeMiB: 5 }] } }"),
      "m.yaml (document 1, ModelProvider p): status.capacity.loadedModels[0].name: required",
    ],
    [
      "prefer term without weight",
      policy(
        "{ crewRef: c, rules: [{ phase: mulling, prefer: [{ weight: 1, selector: {} }, { selector: {} }] }] }",
      ),
      "m.yaml (document 1, CrewSchedulingPolicy crew/pol): spec.rules[0].prefer[1].weight: required",
    ],
    [
      "prefer term without selector",
      policy("{ crewRef: c, rules: [{ phase: mulling, prefer: [{ weight: 1 }] }] }"),
      "m.yaml (document 1, CrewSchedulingPolicy crew/pol): spec.rules[0].prefer[0].selector: required",
    ],
    [
      "rule without phase",
      policy("{ crewRef: c, rules: [{ require: {} }] }"),
      "m.yaml (document 1, CrewSchedulingPolicy crew/pol): spec.rules[0].phase: required",
    ],
    [
      "quality bias as a number",
      policy("{ crewRef: c, qualityBias: { reasoning: 0.7 } }"),
      'm.yaml (document 1, CrewSchedulingPolicy crew/pol): spec.qualityBias["reasoning"]: expected a string, got number 0.7 (quote it)',
    ],
    [
      "whenUnsatisfiable",
      policy("{ crewRef: c, topologySpread: { whenUnsatisfiable: Sometimes } }"),
      'm.yaml (document 1, CrewSchedulingPolicy crew/pol): spec.topologySpread.whenUnsatisfiable: expected one of ScheduleAnyway, DoNotSchedule, got "Sometimes"',
    ],
    [
      "expression without operator",
      policy("{ crewRef: c, rules: [{ phase: mulling, require: { matchExpressions: [{ key: params }] } }] }"),
      "m.yaml (document 1, CrewSchedulingPolicy crew/pol): spec.rules[0].require.matchExpressions[0].operator: required",
    ],
    [
      "missing crewRef",
      policy("{ rules: [] }"),
      "m.yaml (document 1, CrewSchedulingPolicy crew/pol): spec.crewRef: required",
    ],
    [
      "agent capabilities not a list",
      "apiVersion: kubemoot.ai/v1alpha1\nkind: Agent\nmetadata: { name: a, namespace: crew }\nspec: { capabilities: reasoning }\n",
      'm.yaml (document 1, Agent crew/a): spec.capabilities: expected a list, got "reasoning"',
    ],
    [
      "archetype without phases",
      "apiVersion: kubemoot.ai/v1alpha1\nkind: MootArchetype\nmetadata: { name: x }\nspec: { phases: [] }\n",
      "m.yaml (document 1, MootArchetype x): spec.phases: expected at least 1 item(s)",
    ],
    [
      "archetype phase twice",
      "apiVersion: kubemoot.ai/v1alpha1\nkind: MootArchetype\nmetadata: { name: x }\nspec: { phases: [{ name: a }, { name: a }] }\n",
      "m.yaml (document 1, MootArchetype x): spec.phases[1].name: phase a is declared twice",
    ],
    [
      "wrong version",
      "apiVersion: kubemoot.ai/v1\nkind: Model\n",
      'm.yaml (document 1): apiVersion: unsupported version "kubemoot.ai/v1", expected kubemoot.ai/v1alpha1',
    ],
    [
      "unknown kind",
      "apiVersion: kubemoot.ai/v1alpha1\nkind: Crew\n",
      'm.yaml (document 1): kind: unknown kind "Crew", expected one of Model, ModelProvider, Agent, CrewSchedulingPolicy, MootArchetype',
    ],
    [
      "kind missing",
      "apiVersion: kubemoot.ai/v1alpha1\nmetadata: {}\n",
      "m.yaml (document 1): kind: required",
    ],
    [
      "a scalar document",
      "just text",
      "m.yaml (document 1, provider state): not a Kubernetes object (no apiVersion and kind) and not provider state",
    ],
    [
      "a provider state field of the wrong type",
      '{"ollama-a": {"ready": "yes"}}',
      'm.yaml (document 1, provider state): ["ollama-a"].ready: expected true or false, got "yes"',
    ],
  ])("%s", (_name, text, want) => {
    const got = messages(text);
    expect(got).toHaveLength(1);
    expect(got[0]).toContain(want);
  });

  it("counts documents from 1 within each file", () => {
    const ok = "apiVersion: v1\nkind: Namespace\nmetadata: { name: x }\n";
    const bad = "apiVersion: kubemoot.ai/v1alpha1\nkind: Model\nmetadata: { name: m }\nspec: { model: x }\n";
    expect(messages(`${ok}---\n${ok}---\n${bad}`)).toEqual([
      "m.yaml (document 3, Model m): spec.providerRef: required",
    ]);
  });

  it("reports YAML syntax errors with the document", () => {
    const got = messages("apiVersion: v1\nkind: Namespace\n---\nkey: [unclosed\n");
    expect(got[0]).toMatch(/^m\.yaml \(document 2\): YAML: /);
  });

  it("reports duplicates across files", () => {
    const doc =
      "apiVersion: kubemoot.ai/v1alpha1\nkind: Agent\nmetadata: { name: a, namespace: crew }\nspec: {}\n";
    const { issues, set } = parseManifests([
      { file: "a.yaml", text: doc },
      { file: "b.yaml", text: doc },
    ]);
    expect(issues.map(formatIssue)).toEqual([
      "b.yaml (document 1, Agent crew/a): metadata.name: duplicate Agent; first defined in a.yaml (document 1)",
    ]);
    expect(set.agents).toHaveLength(1);
  });

  it("collects every issue of a document", () => {
    expect(messages(model("{ vramMib: x }"))).toEqual([
      "m.yaml (document 1, Model kubemoot/m): spec.model: required",
      "m.yaml (document 1, Model kubemoot/m): spec.providerRef: required",
      'm.yaml (document 1, Model kubemoot/m): spec.vramMib: expected an integer ≥ 0, got "x"',
    ]);
  });
});

describe("manifestError", () => {
  const issue = {
    file: "a.yaml",
    document: 2,
    kind: "Model",
    object: "kubemoot/m",
    field: "spec.model",
    message: "required",
  };

  it("one issue: one line, the field names the file and field", () => {
    const err = manifestError([issue]);
    expect(KubemootError.is(err, ErrorCode.InvalidManifest)).toBe(true);
    expect(err.message).toBe("invalid manifest: a.yaml (document 2, Model kubemoot/m): spec.model: required");
    expect(err.field).toBe("a.yaml spec.model");
  });

  it("many issues: one per line", () => {
    const err = manifestError([issue, { ...issue, field: "spec.providerRef" }]);
    expect(err.message.split("\n")).toEqual([
      "2 invalid manifest fields:",
      "  a.yaml (document 2, Model kubemoot/m): spec.model: required",
      "  a.yaml (document 2, Model kubemoot/m): spec.providerRef: required",
    ]);
  });
});
