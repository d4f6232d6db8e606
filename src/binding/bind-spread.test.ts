// How the binder spreads a crew: topology spread, the load penalty across agents, and
// hysteresis keeping current bindings.
import { describe, expect, it } from "vitest";
import { only, picks, run, spread } from "../../test/binding/bind-helpers.js";
import { agent, model, policy, provider, snapshot } from "../../test/binding/fixtures.js";

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
