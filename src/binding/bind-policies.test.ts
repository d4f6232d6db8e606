// What the binder reads from a crew: capabilities (preference, never a gate), policies and
// their phases, and name resolution across namespaces.
import { describe, expect, it } from "vitest";
import { only, run } from "../../test/binding/bind-helpers.js";
import { agent, model, NOW, policy, provider, qwen, snapshot } from "../../test/binding/fixtures.js";

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
