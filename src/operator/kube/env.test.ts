import { describe, expect, it } from "vitest";
import type { AgentResult } from "../../binding/index.js";
import type { KubeObject } from "./client.js";
import { deploymentsByAgent, planEnvPatch } from "./env.js";

const bound: Record<string, string> = {
  KUBEMOOT_MODEL_MODEL: "qwen3:32b",
  KUBEMOOT_MODEL_ENDPOINT: "http://a:11434",
  KUBEMOOT_TRIAGE_MODEL_MODEL_ID: "qwen3:8b",
  KUBEMOOT_TRIAGE_MODEL_ENDPOINT: "http://b:11434",
  KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:32b","score":70}]',
  KUBEMOOT_MODEL_CANDIDATES_TRIAGE: '[{"model":"qwen3:8b","score":100}]',
};

function agent(env: Record<string, string>, unschedulable: string[] = []): AgentResult {
  return {
    key: "ns/a",
    namespace: "ns",
    name: "a",
    phases: {},
    candidates: { mulling: [], triage: [] },
    unschedulable: unschedulable.map((phase) => ({ phase, reason: "r" })),
    status: { scheduling: {}, conditions: [] },
    env,
  };
}

function deployment(
  containers: { name: string; env?: { name: string; value?: string; valueFrom?: unknown }[] }[],
  meta: Partial<NonNullable<KubeObject["metadata"]>> = {},
): KubeObject {
  return {
    metadata: { name: "a", namespace: "ns", resourceVersion: "7", ...meta },
    spec: { template: { spec: { containers } } },
  };
}

describe("planEnvPatch", () => {
  it("appends the managed variables after the others, guarded by test operations", () => {
    const ops = planEnvPatch(
      deployment([{ name: "agent", env: [{ name: "FOO", value: "1" }] }]),
      agent(bound),
    );
    expect(ops).toEqual([
      { op: "test", path: "/metadata/resourceVersion", value: "7" },
      { op: "test", path: "/spec/template/spec/containers/0/name", value: "agent" },
      {
        op: "add",
        path: "/spec/template/spec/containers/0/env",
        value: [
          { name: "FOO", value: "1" },
          ...Object.entries(bound).map(([name, value]) => ({ name, value })),
        ],
      },
    ]);
  });

  it("returns nothing when the env is already right, in any position", () => {
    const env = [
      { name: "KUBEMOOT_MODEL_CANDIDATES_TRIAGE", value: bound.KUBEMOOT_MODEL_CANDIDATES_TRIAGE },
      { name: "FOO", value: "1" },
      ...Object.entries(bound)
        .filter(([n]) => n !== "KUBEMOOT_MODEL_CANDIDATES_TRIAGE")
        .map(([name, value]) => ({ name, value })),
    ];
    expect(planEnvPatch(deployment([{ name: "agent", env }]), agent(bound))).toBeUndefined();
  });

  it("updates a managed variable in place and replaces valueFrom with a value", () => {
    const env = [
      { name: "KUBEMOOT_MODEL_MODEL", value: "old" },
      { name: "FOO", value: "1" },
      { name: "KUBEMOOT_MODEL_ENDPOINT", valueFrom: { configMapKeyRef: { name: "x", key: "y" } } },
    ];
    const ops = planEnvPatch(deployment([{ name: "agent", env }]), agent(bound))!;
    const value = ops.at(-1)! as { value: { name: string; value?: string }[] };
    expect(value.value.slice(0, 3)).toEqual([
      { name: "KUBEMOOT_MODEL_MODEL", value: "qwen3:32b" },
      { name: "FOO", value: "1" },
      { name: "KUBEMOOT_MODEL_ENDPOINT", value: "http://a:11434" },
    ]);
  });

  it("keeps an unschedulable phase's model and endpoint as they are", () => {
    const current = Object.entries(bound).map(([name, value]) => ({ name, value }));
    const env = {
      KUBEMOOT_MODEL_CANDIDATES_MULLING: "[]",
      KUBEMOOT_MODEL_CANDIDATES_TRIAGE: bound.KUBEMOOT_MODEL_CANDIDATES_TRIAGE!,
      KUBEMOOT_TRIAGE_MODEL_MODEL_ID: "qwen3:8b",
      KUBEMOOT_TRIAGE_MODEL_ENDPOINT: "http://b:11434",
    };
    const ops = planEnvPatch(deployment([{ name: "agent", env: current }]), agent(env, ["mulling"]))!;
    const next = (ops.at(-1) as { value: { name: string; value: string }[] }).value;
    expect(Object.fromEntries(next.map((e) => [e.name, e.value]))).toEqual({
      ...bound,
      KUBEMOOT_MODEL_CANDIDATES_MULLING: "[]",
    });
  });

  it("removes a managed variable the binder no longer sets when its phase is bound", () => {
    const current = [{ name: "KUBEMOOT_TRIAGE_MODEL_MODEL_ID", value: "x" }];
    const { KUBEMOOT_TRIAGE_MODEL_MODEL_ID: _drop, ...rest } = bound;
    const ops = planEnvPatch(deployment([{ name: "agent", env: current }]), agent(rest))!;
    const next = (ops.at(-1) as { value: { name: string }[] }).value.map((e) => e.name);
    expect(next).not.toContain("KUBEMOOT_TRIAGE_MODEL_MODEL_ID");
  });

  it("patches every container, or only those the annotation names", () => {
    const two = [{ name: "agent" }, { name: "sidecar" }];
    expect(planEnvPatch(deployment(two), agent(bound))!.filter((o) => o.op === "add")).toHaveLength(2);
    const only = planEnvPatch(
      deployment(two, { annotations: { "kubemoot.ai/env-containers": "sidecar" } }),
      agent(bound),
    )!;
    expect(only.filter((o) => o.op === "add").map((o) => o.path)).toEqual([
      "/spec/template/spec/containers/1/env",
    ]);
  });
});

describe("deploymentsByAgent", () => {
  const d = (name: string, ns: string, labels?: Record<string, string>): KubeObject => ({
    metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  });

  it("prefers labelled Deployments, falls back to the Agent's name, never crosses namespaces", () => {
    const deployments = [
      d("a", "ns"),
      d("runtime-b1", "ns", { "kubemoot.ai/agent": "b" }),
      d("runtime-b2", "ns", { "kubemoot.ai/agent": "b" }),
      d("b", "ns"),
      d("c", "ns", { "kubemoot.ai/agent": "other" }),
      d("e", "elsewhere"),
    ];
    const agents = ["a", "b", "c", "e"].map((name) => ({ namespace: "ns", name }));
    const m = deploymentsByAgent(deployments, agents);
    expect(m.get("ns/a")!.map((x) => x.metadata!.name)).toEqual(["a"]);
    expect(m.get("ns/b")!.map((x) => x.metadata!.name)).toEqual(["runtime-b1", "runtime-b2"]);
    expect(m.has("ns/c")).toBe(false); // named c, but labelled for another agent
    expect(m.has("ns/e")).toBe(false);
  });
});
