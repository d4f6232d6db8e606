// The binder when nothing matches: the selector named exactly, the events and conditions it
// leaves, and triage falling back to the mulling pick.
import { describe, expect, it } from "vitest";
import { only, run, spread } from "../../test/binding/bind-helpers.js";
import { agent, model, policy, provider, qwen, snapshot } from "../../test/binding/fixtures.js";
import type { ClusterSnapshot, SchedulingRule } from "./types.js";

describe("zero match", () => {
  const s = snapshot({
    providers: [provider("gpu-a")],
    models: [model("qwen3-8b", { id: "qwen3:8b", labels: qwen("8B", "low") })],
    agents: [agent("kubectl-agent", { caps: ["tool-calling"] })],
    policies: [
      policy("homelab", {
        rules: [
          {
            phase: "mulling",
            require: {
              matchLabels: { "capability/tool-calling": "true" },
              matchExpressions: [{ key: "params", operator: "In", values: ["14B", "32B"] }],
            },
          },
        ],
      }),
    ],
  });
  const reason = "no Model matches require selectors {capability/tool-calling: true, params: 14B|32B}";

  it("names the selector, exactly", () => {
    const a = only(run(s));
    expect(a.unschedulable).toEqual([{ phase: "mulling", reason }]);
    expect(a.phases.mulling).toBeUndefined();
  });

  it("a FailedScheduling event on the policy", () => {
    expect(run(s).events).toEqual([
      {
        type: "Warning",
        reason: "FailedScheduling",
        object: "CrewSchedulingPolicy/crew/homelab",
        message: `agent crew/kubectl-agent phase mulling: ${reason}`,
      },
    ]);
  });

  it("Scheduled=False (Unschedulable) on the agent and the policy; lastUnschedulable", () => {
    const r = run(s);
    const a = only(r);
    expect(a.status.conditions).toEqual([
      {
        type: "Scheduled",
        status: "False",
        reason: "Unschedulable",
        message: `mulling: ${reason}`,
        lastTransitionTime: "2026-05-15T15:30:00.000Z",
      },
    ]);
    expect(a.status.scheduling.lastUnschedulable).toEqual({
      phase: "mulling",
      reason,
      observedAt: "2026-05-15T15:30:00.000Z",
      crewSchedulingPolicy: "homelab",
    });
    const scheduled = r.policies[0]!.status.conditions.find((c) => c.type === "Scheduled");
    expect(scheduled).toMatchObject({ status: "False", reason: "Unschedulable" });
    expect(r.policies[0]!.unschedulableAgents).toBe(1);
  });

  it("the unbound phase sets no model env; the triage phase (no rule: any Model) still binds", () => {
    const a = only(run(s));
    expect(a.phases.triage?.model).toBe("qwen3:8b");
    expect(a.env).toEqual({
      KUBEMOOT_TRIAGE_MODEL_MODEL_ID: "qwen3:8b",
      KUBEMOOT_TRIAGE_MODEL_ENDPOINT: "http://gpu-a:11434",
      KUBEMOOT_MODEL_CANDIDATES_MULLING: "[]",
      KUBEMOOT_MODEL_CANDIDATES_TRIAGE: '[{"model":"qwen3:8b","score":0}]',
    });
  });

  it.each<[string, ClusterSnapshot["models"], ClusterSnapshot["providers"], string]>([
    [
      "matching Models whose providers cannot take them are counted by reason",
      [
        model("m1", { labels: { family: "qwen3" }, provider: "down" }),
        model("m2", { labels: { family: "qwen3" }, provider: "small", vramMib: 30000 }),
        model("m3", { labels: { family: "qwen3" }, provider: "small", vramMib: 25000 }),
        model("m4", { labels: { family: "qwen3" }, provider: "missing" }),
        model("m5", { labels: { family: "qwen3" }, ready: false }),
        model("x", { labels: { family: "llama" } }),
      ],
      [provider("down", { ready: false }), provider("small", { vramTotalMiB: 24563 }), provider("gpu-a")],
      "no feasible Model for require selectors {family: qwen3}: 2 insufficient VRAM, 1 Model not ready, 1 provider not found, 1 provider not ready",
    ],
    ["an empty bundle", [], [], "no Model matches require selectors {family: qwen3}"],
    [
      "a full provider",
      [model("m", { labels: { family: "qwen3" } })],
      [provider("gpu-a", { maxParallel: 1, agentCount: 8 })],
      "no feasible Model for require selectors {family: qwen3}: 1 no parallel headroom",
    ],
  ])("%s", (_name, models, providers, reason) => {
    const r = run(
      snapshot({
        models,
        providers,
        agents: [agent("a")],
        policies: [
          policy("p", {
            rules: [
              { phase: "mulling", require: { matchLabels: { family: "qwen3" } } },
              { phase: "triage", require: { matchLabels: { family: "qwen3" } } },
            ],
          }),
        ],
      }),
    );
    expect(only(r).unschedulable).toEqual([
      { phase: "mulling", reason },
      { phase: "triage", reason },
    ]);
  });

  it("an invalid selector is an error on the policy, not a crash", () => {
    const r = run(
      snapshot({
        models: [model("m")],
        providers: [provider("gpu-a")],
        agents: [agent("a")],
        policies: [
          policy("p", {
            rules: [
              {
                phase: "mulling",
                require: { matchExpressions: [{ key: "params", operator: "Gt", values: ["8"] }] },
              },
            ],
          }),
        ],
      }),
    );
    const error =
      'spec.rules[0].require.matchExpressions[0].operator: "Gt" is not one of In, NotIn, Exists, DoesNotExist';
    expect(only(r).unschedulable).toEqual([
      { phase: "mulling", reason: `invalid require selector: ${error}` },
    ]);
    // triage has no rule of its own: it binds any Model
    expect(only(r).phases.triage?.modelRef).toBe("m");
    expect(r.events[0]).toEqual({
      type: "Warning",
      reason: "InvalidSelector",
      object: "CrewSchedulingPolicy/crew/p",
      message: error,
    });
    expect(r.policies[0]!.status.conditions[0]).toMatchObject({
      type: "Valid",
      status: "False",
      reason: "InvalidSelector",
    });
  });
});

describe("triage falls back to the mulling pick", () => {
  const base = {
    models: [
      model("qwen3-14b", { id: "qwen3:14b", labels: qwen("14B", "medium"), provider: "gpu-a" }),
      model("qwen3-8b", { id: "qwen3:8b", labels: qwen("8B", "low"), provider: "gpu-b", ready: false }),
    ],
    providers: [provider("gpu-a"), provider("gpu-b")],
    agents: [agent("a", { caps: ["reasoning"] })],
  };
  const rules: SchedulingRule[] = [
    { phase: "mulling", require: { matchLabels: { "capability/tool-calling": "true" } } },
    { phase: "triage", require: { matchLabels: { params: "8B" } } },
  ];

  it("with no feasible triage pick, triage takes mulling's model and endpoint", () => {
    const a = only(
      run(snapshot({ ...base, policies: [policy("p", { rules, qualityBias: { reasoning: "0.7" } })] })),
    );
    expect(a.unschedulable).toEqual([]);
    expect(a.phases.triage).toEqual({ ...a.phases.mulling, fallback: true });
    expect(a.env.KUBEMOOT_TRIAGE_MODEL_MODEL_ID).toBe("qwen3:14b");
    expect(a.env.KUBEMOOT_TRIAGE_MODEL_ENDPOINT).toBe("http://gpu-a:11434");
    // the bound model leads the triage list with its triage quality score (medium at 0.7 = 60)
    expect(a.candidates.triage).toEqual([{ model: "qwen3:14b", score: 60 }]);
    expect(a.status.conditions[0]!.message).toBe(
      "mulling: qwen3:14b on gpu-a; triage: qwen3:14b on gpu-a (mulling fallback)",
    );
  });

  it("the fallback may violate a ScheduleAnyway spread", () => {
    const p = policy("p", { rules, spread: spread("ScheduleAnyway") });
    expect(only(run(snapshot({ ...base, policies: [p] }))).phases.triage?.fallback).toBe(true);
  });

  it("DoNotSchedule refuses the fallback: triage is unschedulable", () => {
    const p = policy("p", { rules, spread: spread("DoNotSchedule") });
    const a = only(run(snapshot({ ...base, policies: [p] })));
    expect(a.phases.triage).toBeUndefined();
    expect(a.unschedulable).toEqual([
      { phase: "triage", reason: "no feasible Model for require selectors {params: 8B}: 1 Model not ready" },
    ]);
  });

  it("no mulling pick, no fallback", () => {
    const p = policy("p", {
      rules: [
        { phase: "mulling", require: { matchLabels: { params: "70B" } } },
        { phase: "triage", require: { matchLabels: { params: "70B" } } },
      ],
    });
    const a = only(run(snapshot({ ...base, policies: [p] })));
    expect(a.unschedulable.map((u) => u.phase)).toEqual(["mulling", "triage"]);
  });
});
