import { describe, expect, it } from "vitest";
import { agent, model, NOW, policy, provider, qwen, snapshot } from "../../test/binding/fixtures.js";
import { bind } from "./bind.js";
import { toDryRun } from "./dry-run.js";
import type { AgentResult, BindResult, ClusterSnapshot, SchedulingRule, TopologySpread } from "./types.js";

function run(s: ClusterSnapshot, o: Partial<Parameters<typeof bind>[1]> = {}): BindResult {
  return bind(s, { now: NOW, ...o });
}

function only(r: BindResult): AgentResult {
  expect(r.agents).toHaveLength(1);
  return r.agents[0]!;
}

function picks(r: BindResult, phase: "mulling" | "triage"): Record<string, string | undefined> {
  return Object.fromEntries(r.agents.map((a) => [a.name, a.phases[phase]?.provider]));
}

const spread = (
  whenUnsatisfiable: TopologySpread["whenUnsatisfiable"],
  topologyKey = "provider",
): TopologySpread => ({
  whenUnsatisfiable,
  topologyKey,
  phaseKeys: ["mulling", "triage"],
});

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

describe("topology spread", () => {
  // gpu-a is better for both phases: mulling +100 vs +10; triage 200 prefer − 100 = 100 vs −10
  const models = [
    model("big", { id: "big", labels: { tier: "big" }, provider: "gpu-a" }),
    model("small", { id: "small", labels: { tier: "small" }, provider: "gpu-b" }),
  ];
  const rules = [
    { phase: "mulling" },
    { phase: "triage", prefer: [{ weight: 200, selector: { matchLabels: { tier: "big" } } }] },
  ];
  const providers = [
    provider("gpu-a", { labels: { rack: "r1" } }),
    provider("gpu-b", { labels: { rack: "r2" }, weight: 10 }),
  ];

  it("without spread, both phases take the best (gpu-a)", () => {
    const a = only(
      run(snapshot({ models, providers, agents: [agent("a")], policies: [policy("p", { rules })] })),
    );
    expect([a.phases.mulling?.provider, a.phases.triage?.provider]).toEqual(["gpu-a", "gpu-a"]);
    expect(a.phases.triage?.score).toBe(100); // 200 − 100
  });

  it.each(["ScheduleAnyway", "DoNotSchedule"] as const)(
    "%s: triage goes to a distinct provider when possible",
    (w) => {
      const p = policy("p", { rules, spread: spread(w) });
      const a = only(run(snapshot({ models, providers, agents: [agent("a")], policies: [p] })));
      expect([a.phases.mulling?.provider, a.phases.triage?.provider]).toEqual(["gpu-a", "gpu-b"]);
      expect(a.phases.triage?.score).toBe(-10);
    },
  );

  it("a provider label as topologyKey: two providers in one rack are one domain", () => {
    const sameRack = [
      provider("gpu-a", { labels: { rack: "r1" } }),
      provider("gpu-b", { labels: { rack: "r1" } }),
    ];
    const anyway = policy("p", { rules, spread: spread("ScheduleAnyway", "rack") });
    const a = only(run(snapshot({ models, providers: sameRack, agents: [agent("a")], policies: [anyway] })));
    expect(a.phases.triage?.provider).toBe("gpu-a"); // violated, best binding
    const strict = policy("p", { rules, spread: spread("DoNotSchedule", "rack") });
    const b = only(run(snapshot({ models, providers: sameRack, agents: [agent("a")], policies: [strict] })));
    expect(b.unschedulable).toEqual([
      {
        phase: "triage",
        reason:
          "topologySpread DoNotSchedule: no feasible Model for require selectors {} outside rack=r1 (taken by mulling)",
      },
    ]);
    // distinct racks: spread kept
    const c = only(run(snapshot({ models, providers, agents: [agent("a")], policies: [strict] })));
    expect(c.phases.triage?.provider).toBe("gpu-b");
  });

  it("ScheduleAnyway falls back to the best binding on a single provider; DoNotSchedule leaves triage unschedulable", () => {
    const one = [provider("gpu-a")];
    const m = [model("m", { provider: "gpu-a" })];
    const anyway = only(
      run(
        snapshot({
          models: m,
          providers: one,
          agents: [agent("a")],
          policies: [policy("p", { spread: spread("ScheduleAnyway") })],
        }),
      ),
    );
    expect(anyway.phases.triage?.provider).toBe("gpu-a");
    expect(anyway.unschedulable).toEqual([]);
    const strict = run(
      snapshot({
        models: m,
        providers: one,
        agents: [agent("a")],
        policies: [policy("p", { spread: spread("DoNotSchedule") })],
      }),
    );
    expect(only(strict).phases.triage).toBeUndefined();
    expect(only(strict).unschedulable).toEqual([
      {
        phase: "triage",
        reason:
          "topologySpread DoNotSchedule: no feasible Model for require selectors {} outside provider=gpu-a (taken by mulling)",
      },
    ]);
    expect(strict.events.map((e) => e.reason)).toEqual(["FailedScheduling"]);
  });

  it("a provider without the topology label never keeps the spread", () => {
    const unlabeled = [provider("gpu-a", { labels: { rack: "r1" } }), provider("gpu-b")];
    const p = policy("p", { rules, spread: spread("DoNotSchedule", "rack") });
    const a = only(run(snapshot({ models, providers: unlabeled, agents: [agent("a")], policies: [p] })));
    expect(a.phases.triage).toBeUndefined();
  });

  it("phases outside phaseKeys are not spread", () => {
    const p = policy("p", {
      rules,
      spread: { whenUnsatisfiable: "DoNotSchedule", topologyKey: "provider", phaseKeys: ["triage"] },
    });
    const a = only(run(snapshot({ models, providers, agents: [agent("a")], policies: [p] })));
    expect(a.phases.triage?.provider).toBe("gpu-a");
  });
});

describe("load penalty across agents (maxParallel 2)", () => {
  // mulling: gpu-a +100, gpu-b +92; each agent already bound to a provider in the phase costs
  // ⌊10·n/2⌋ there.
  const providers = [
    provider("gpu-a", { maxParallel: 2 }),
    provider("gpu-b", { maxParallel: 2, weight: 92 }),
  ];
  const models = [model("m-a", { provider: "gpu-a" }), model("m-b", { provider: "gpu-b" })];
  const p = policy("p", { rules: [{ phase: "mulling" }] });

  it("spreads toolers once the penalty outweighs the weight gap", () => {
    const agents = ["t1", "t2", "t3", "t4"].map((n) => agent(n, { role: "tooler" }));
    const r = run(snapshot({ models, providers, agents, policies: [p] }));
    // t1: a 100 vs b 92 → a. t2: a 100 − 5 = 95 → a. t3: a 100 − 10 = 90 < b 92 → b.
    // t4: a 90 vs b 92 − 5 = 87 → a.
    expect(picks(r, "mulling")).toEqual({ t1: "gpu-a", t2: "gpu-a", t3: "gpu-b", t4: "gpu-a" });
    expect(r.agents.map((a) => a.phases.mulling?.score)).toEqual([100, 95, 92, 90]);
  });

  it("coordinators bind first, take no penalty, and count toward others' load", () => {
    const agents = [agent("a-tooler"), agent("z-coord", { role: "coordinator" }), agent("b-tooler")];
    const r = run(snapshot({ models, providers, agents, policies: [p] }));
    // z-coord first: a 100. a-tooler: a 95 → a. b-tooler: a 90 < b 92 → b.
    expect(picks(r, "mulling")).toEqual({ "a-tooler": "gpu-a", "b-tooler": "gpu-b", "z-coord": "gpu-a" });
    expect(r.agents.map((a) => a.key)).toEqual(["crew/a-tooler", "crew/b-tooler", "crew/z-coord"]);
  });

  it("a coordinator bound after others still pays nothing", () => {
    const agents = [
      agent("c1", { role: "coordinator" }),
      agent("c2", { role: "coordinator" }),
      agent("c3", { role: "coordinator" }),
    ];
    const r = run(snapshot({ models, providers, agents, policies: [p] }));
    expect(r.agents.map((a) => a.phases.mulling?.score)).toEqual([100, 100, 100]);
  });
});

describe("hysteresis through bind", () => {
  const models = [
    model("m-a", { provider: "gpu-a", id: "qwen3:14b" }),
    model("m-b", { provider: "gpu-b", id: "qwen3:14b" }),
  ];
  const current = { model: "qwen3:14b", modelRef: "m-b", provider: "gpu-b", endpoint: "http://gpu-b:11434" };
  it.each<[number, string]>([
    [125, "gpu-b"], // beats the incumbent (100) by exactly 25: stays
    [126, "gpu-a"], // by 26: moves
  ])("gpu-a weight %s → %s", (weight, want) => {
    const providers = [provider("gpu-a", { weight }), provider("gpu-b", { weight: 100 })];
    const r = run(
      snapshot({
        models,
        providers,
        agents: [agent("a", { scheduling: current })],
        policies: [policy("p", { rules: [{ phase: "mulling" }] })],
      }),
    );
    expect(only(r).phases.mulling?.provider).toBe(want);
  });

  it("applies per phase: triage keeps its own current provider", () => {
    // triage: gpu-a −100, gpu-b −120 → a beats b by 20 ≤ 25: b kept
    const providers = [provider("gpu-a", { weight: 100 }), provider("gpu-b", { weight: 120 })];
    const r = run(
      snapshot({
        models,
        providers,
        agents: [agent("a", { scheduling: { triage: current } })],
        policies: [policy("p")],
      }),
    );
    expect(only(r).phases.triage?.provider).toBe("gpu-b");
    expect(only(r).phases.mulling?.provider).toBe("gpu-b"); // mulling: b 120 > a 100 anyway
  });
});

describe("capabilities shape preference, never gate", () => {
  it("an agent whose capabilities no Model has still binds to the best available Model", () => {
    const r = run(
      snapshot({
        models: [
          model("qwen3-8b", { labels: qwen("8B", "low") }),
          model("qwen3-32b", { labels: qwen("32B", "high") }),
        ],
        providers: [provider("gpu-a")],
        agents: [agent("astrologer", { caps: ["astrology", "tarot"] })],
        policies: [policy("p", { qualityBias: { reasoning: "0.9", default: "0.2" } })],
      }),
    );
    // default 0.2: low 80 beats high 20
    expect(only(r).phases.mulling?.modelRef).toBe("qwen3-8b");
    expect(only(r).unschedulable).toEqual([]);
  });

  it("a balanced crew (b = 0.5) prefers the medium model", () => {
    const r = run(
      snapshot({
        models: [
          model("l", { labels: { latencyClass: "low" } }),
          model("m", { labels: { latencyClass: "medium" } }),
          model("h", { labels: { latencyClass: "high" } }),
        ],
        providers: [provider("gpu-a")],
        agents: [agent("a")],
        policies: [policy("p", { qualityBias: { default: "0.5" } })],
      }),
    );
    expect(only(r).phases.mulling?.modelRef).toBe("m");
    expect(only(r).candidates.mulling).toEqual([
      { model: "m", score: 100 },
      { model: "h", score: 50 },
      { model: "l", score: 50 },
    ]);
  });
});

describe("policies and crews", () => {
  const base = { models: [model("m")], providers: [provider("gpu-a")] };

  it.each<[string, ReturnType<typeof agent>, string]>([
    [
      "no crew label",
      agent("a", { crew: null }),
      "no CrewSchedulingPolicy applies: the agent has no kubemoot.ai/crew label",
    ],
    [
      "no policy for the crew",
      agent("a", { crew: "other" }),
      "no CrewSchedulingPolicy for crew other in namespace crew",
    ],
    [
      "a policy in another namespace does not apply",
      agent("a", { namespace: "team-b" }),
      "no CrewSchedulingPolicy for crew crew in namespace team-b",
    ],
  ])("%s: unschedulable, with the event on the Agent", (_name, a, reason) => {
    const r = run(snapshot({ ...base, agents: [a], policies: [policy("p")] }));
    expect(only(r).unschedulable).toEqual([
      { phase: "mulling", reason },
      { phase: "triage", reason },
    ]);
    expect(r.events.map((e) => e.object)).toEqual([`Agent/${a.namespace}/a`, `Agent/${a.namespace}/a`]);
    expect(only(r).status.scheduling.lastUnschedulable).toEqual({
      phase: "mulling",
      reason,
      observedAt: NOW.toISOString(),
    });
  });

  it("two policies for one crew: the first by name governs, the other is reported", () => {
    const r = run(
      snapshot({
        ...base,
        agents: [agent("a")],
        policies: [
          policy("z-second", { rules: [{ phase: "mulling", require: { matchLabels: { x: "y" } } }] }),
          policy("a-first"),
        ],
      }),
    );
    expect(only(r).policy).toEqual({ namespace: "crew", name: "a-first" });
    expect(only(r).unschedulable).toEqual([]);
    expect(r.events).toEqual([
      {
        type: "Warning",
        reason: "PolicyConflict",
        object: "CrewSchedulingPolicy/crew/z-second",
        message:
          "spec.crewRef: crew crew is governed by CrewSchedulingPolicy a-first; this policy applies to no agent",
      },
    ]);
    expect(r.policies.map((p) => [p.name, p.agents])).toEqual([
      ["a-first", 1],
      ["z-second", 0],
    ]);
  });

  it("unknown phases are reported on the policy's status and as a Warning", () => {
    const r = run(
      snapshot({
        ...base,
        agents: [agent("a")],
        policies: [policy("p", { rules: [{ phase: "pondering" }] })],
      }),
    );
    expect(r.policies[0]!.status.unknownPhases).toEqual(["pondering"]);
    expect(r.events.map((e) => e.reason)).toEqual(["UnknownPhase"]);
    expect(only(r).unschedulable).toEqual([]);
  });
});

describe("resolution through bind", () => {
  it("a Model's providerRef resolves from the agent's namespace first", () => {
    const r = run(
      snapshot({
        models: [model("m", { provider: "gpu", namespace: "kubemoot" })],
        providers: [
          provider("gpu", { namespace: "kubemoot", endpoint: "http://system" }),
          provider("gpu", { namespace: "crew", endpoint: "http://crew" }),
        ],
        agents: [agent("a")],
        policies: [policy("p")],
      }),
    );
    expect(only(r).phases.mulling).toMatchObject({
      endpoint: "http://crew",
      provider: "gpu",
      providerNamespace: "crew",
    });
  });

  it("Models of other namespaces are not visible; a nearer Model shadows one of the same name", () => {
    const r = run(
      snapshot({
        models: [
          model("m", { namespace: "elsewhere", id: "elsewhere" }),
          model("shared", { namespace: "kubemoot", id: "system" }),
          model("shared", { namespace: "crew", id: "crew-local" }),
        ],
        providers: [provider("gpu-a")],
        agents: [agent("a")],
        policies: [policy("p")],
      }),
    );
    expect(only(r).candidates.mulling).toEqual([{ model: "crew-local", score: 0 }]);
  });
});

describe("what the operator writes", () => {
  const s = snapshot({
    models: [model("qwen3-14b", { id: "qwen3:14b", labels: qwen("14B", "medium"), vramMib: 9216 })],
    providers: [provider("gpu-a", { endpoint: "http://ollama-a:11434" })],
    agents: [agent("a", { caps: ["tool-calling"] })],
    policies: [policy("p", { qualityBias: { "tool-calling": "0.3" } })],
  });

  it("status.scheduling, conditions and env", () => {
    const a = only(run(s));
    expect(a.status.scheduling).toEqual({
      model: "qwen3:14b",
      modelRef: "qwen3-14b",
      provider: "gpu-a",
      endpoint: "http://ollama-a:11434",
      triage: {
        model: "qwen3:14b",
        modelRef: "qwen3-14b",
        provider: "gpu-a",
        endpoint: "http://ollama-a:11434",
      },
    });
    expect(a.status.conditions).toEqual([
      {
        type: "Scheduled",
        status: "True",
        reason: "Scheduled",
        message: "mulling: qwen3:14b on gpu-a; triage: qwen3:14b on gpu-a",
        lastTransitionTime: NOW.toISOString(),
      },
    ]);
    expect(a.env).toEqual({
      KUBEMOOT_MODEL_MODEL: "qwen3:14b",
      KUBEMOOT_MODEL_ENDPOINT: "http://ollama-a:11434",
      KUBEMOOT_TRIAGE_MODEL_MODEL_ID: "qwen3:14b",
      KUBEMOOT_TRIAGE_MODEL_ENDPOINT: "http://ollama-a:11434",
      KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:14b","score":60}]',
      KUBEMOOT_MODEL_CANDIDATES_TRIAGE: '[{"model":"qwen3:14b","score":60}]',
    });
    expect(Object.keys(a.env)).toEqual([
      "KUBEMOOT_MODEL_MODEL",
      "KUBEMOOT_MODEL_ENDPOINT",
      "KUBEMOOT_TRIAGE_MODEL_MODEL_ID",
      "KUBEMOOT_TRIAGE_MODEL_ENDPOINT",
      "KUBEMOOT_MODEL_CANDIDATES_MULLING",
      "KUBEMOOT_MODEL_CANDIDATES_TRIAGE",
    ]);
  });

  it("a condition keeps its lastTransitionTime while its status holds; a previous lastUnschedulable is kept", () => {
    const earlier = "2026-01-01T00:00:00.000Z";
    const last = { phase: "mulling", reason: "old", observedAt: earlier, crewSchedulingPolicy: "p" };
    const withStatus = {
      ...s,
      agents: [
        {
          ...s.agents[0]!,
          status: {
            scheduling: { lastUnschedulable: last },
            conditions: [
              {
                type: "Scheduled",
                status: "True" as const,
                reason: "Scheduled",
                message: "",
                lastTransitionTime: earlier,
              },
            ],
          },
        },
      ],
    };
    const a = only(run(withStatus));
    expect(a.status.conditions[0]!.lastTransitionTime).toBe(earlier);
    expect(a.status.scheduling.lastUnschedulable).toEqual(last);
  });

  it("the dry-run document has the spec's keys in the spec's order", () => {
    const doc = toDryRun(run(s));
    expect(Object.keys(doc)).toEqual(["agents", "events"]);
    const entry = doc.agents["crew/a"]!;
    expect(Object.keys(entry)).toEqual(["mulling", "triage", "candidates", "unschedulable"]);
    expect(Object.keys(entry.mulling!)).toEqual(["model", "modelRef", "provider", "endpoint", "score"]);
    expect(Object.keys(entry.candidates)).toEqual(["mulling", "triage"]);
    expect(entry.mulling).toEqual({
      model: "qwen3:14b",
      modelRef: "qwen3-14b",
      provider: "gpu-a",
      endpoint: "http://ollama-a:11434",
      score: 60 + 100, // medium at 0.3 + mulling weight; unknown VRAM: capacity 0
    });
  });
});

describe("options", () => {
  const s = snapshot({
    models: [model("m", { provider: "gpu-a" }), model("n", { provider: "gpu-b" })],
    providers: [
      provider("gpu-a", { vramTotalMiB: 24563, loaded: [["x", 15000]] }),
      provider("gpu-b", { vramTotalMiB: 24563 }),
    ],
    agents: [agent("a")],
    policies: [policy("p", { rules: [{ phase: "mulling" }] })],
  });

  it("spread prefers the emptier card, binpack the fuller one", () => {
    expect(only(run(s, { strategy: "spread" })).phases.mulling?.provider).toBe("gpu-b");
    expect(only(run(s, { strategy: "binpack" })).phases.mulling?.provider).toBe("gpu-a");
  });

  it.each([
    [{ strategy: "pack" as "spread" }, "strategy"],
    [{ concurrencyFactor: -1 }, "concurrencyFactor"],
    [{ evictionOverheadMiB: Number.NaN }, "evictionOverheadMiB"],
    [{ now: new Date("nope") }, "now"],
  ])("rejects %j", (o, field) => {
    expect(() => run(s, o)).toThrow(expect.objectContaining({ field }));
  });
});
