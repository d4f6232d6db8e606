// Per-discussion bindings (docs/rules/binding.md §9): each thread's phases bound by bind itself,
// with hysteresis per thread, topology spread per discussion and the load term across threads.
import { describe, expect, it } from "vitest";
import { run, spread } from "../../test/binding/bind-helpers.js";
import { agent, model, NOW, policy, provider, qwen, snapshot } from "../../test/binding/fixtures.js";
import { bindDiscussions, type DiscussionResult, type DiscussionThread } from "./discussion.js";
import type { ClusterSnapshot } from "./types.js";

function discuss(s: ClusterSnapshot, threads: readonly DiscussionThread[]): DiscussionResult[] {
  return bindDiscussions(s, threads, { now: NOW });
}

/** threadId → provider per phase ("-" when unbound). */
function where(out: readonly DiscussionResult[]): Record<string, string> {
  const acc: Record<string, string> = {};
  for (const p of out)
    acc[p.threadId] = `${acc[p.threadId] ? `${acc[p.threadId]} ` : ""}${p.binding?.provider ?? "-"}`;
  return acc;
}

describe("bindDiscussions", () => {
  it("binds two threads of one agent, each with its bindings and candidate lists", () => {
    // mulling: gpu-a 60 + 100 vs gpu-b 30 + 100; triage admits 8B only: gpu-b 30 − 100.
    // The second thread pays the load of the first: ⌊10·1/4⌋ = 2.
    const s = snapshot({
      models: [
        model("qwen3-14b", { id: "qwen3:14b", labels: qwen("14B", "medium"), provider: "gpu-a" }),
        model("qwen3-8b", { id: "qwen3:8b", labels: qwen("8B", "low"), provider: "gpu-b" }),
      ],
      providers: [provider("gpu-a", { maxParallel: 4 }), provider("gpu-b", { maxParallel: 4 })],
      agents: [agent("a")],
      policies: [
        policy("p", {
          qualityBias: { default: "0.7" },
          rules: [{ phase: "triage", require: { matchLabels: { params: "8B" } } }],
        }),
      ],
    });
    const out = discuss(s, [
      { threadId: "t2", agent: "crew/a" },
      { threadId: "t1", agent: "crew/a" },
    ]);
    const mulling = [
      { model: "qwen3:14b", score: 60 },
      { model: "qwen3:8b", score: 30 },
    ];
    const triage = [{ model: "qwen3:8b", score: 30 }];
    expect(out.map((p) => [p.threadId, p.phase, p.binding?.provider, p.binding?.score])).toEqual([
      ["t1", "mulling", "gpu-a", 160],
      ["t1", "triage", "gpu-b", -70],
      ["t2", "mulling", "gpu-a", 158],
      ["t2", "triage", "gpu-b", -72],
    ]);
    expect(out.map((p) => p.candidates)).toEqual([mulling, triage, mulling, triage]);
    expect(out.every((p) => p.agent === "crew/a" && p.unschedulable === undefined)).toBe(true);
    // One algorithm: the first thread is bound exactly as bind binds the Agent itself.
    const own = run(s).agents[0]!;
    expect(out[0]!.binding).toEqual(own.phases.mulling);
    expect(out[1]!.binding).toEqual(own.phases.triage);
  });

  describe("hysteresis per thread", () => {
    // Both Models are qwen3:14b; mulling scores are the providers' weights (no load: 100 slots).
    const models = [
      model("m-a", { provider: "gpu-a", id: "qwen3:14b" }),
      model("m-b", { provider: "gpu-b", id: "qwen3:14b" }),
    ];
    const onB = { model: "qwen3:14b", modelRef: "m-b", provider: "gpu-b", endpoint: "http://gpu-b:11434" };
    it.each<[number, string]>([
      [125, "gpu-b"], // gpu-a beats the incumbent (100) by exactly 25: stays
      [126, "gpu-a"], // by 26: moves
    ])("gpu-a weight %s: the thread on gpu-b → %s; a thread with none → gpu-a", (weight, want) => {
      const s = snapshot({
        models,
        providers: [
          provider("gpu-a", { weight, maxParallel: 100 }),
          provider("gpu-b", { weight: 100, maxParallel: 100 }),
        ],
        // The Agent's own binding is no thread's incumbent.
        agents: [agent("a", { scheduling: onB })],
        policies: [policy("p", { rules: [{ phase: "mulling" }] })],
      });
      const out = discuss(s, [
        { threadId: "kept", agent: "crew/a", current: { mulling: onB } },
        { threadId: "new", agent: "crew/a" },
      ]);
      const mulling = Object.fromEntries(
        out.filter((p) => p.phase === "mulling").map((p) => [p.threadId, p.binding?.provider]),
      );
      expect(mulling).toEqual({ kept: want, new: "gpu-a" });
    });
  });

  describe("topology spread per discussion", () => {
    // As in bind-spread.test.ts: gpu-a is better for both phases (mulling +100 vs +10; triage
    // 200 prefer − 100 vs −10); 100 slots each, so the load term stays 0.
    const models = [
      model("big", { id: "big", labels: { tier: "big" }, provider: "gpu-a" }),
      model("small", { id: "small", labels: { tier: "small" }, provider: "gpu-b" }),
    ];
    const rules = [
      { phase: "mulling" },
      { phase: "triage", prefer: [{ weight: 200, selector: { matchLabels: { tier: "big" } } }] },
    ];
    const providers = [
      provider("gpu-a", { maxParallel: 100 }),
      provider("gpu-b", { weight: 10, maxParallel: 100 }),
    ];
    const threads = [
      { threadId: "d1", agent: "crew/a" },
      { threadId: "d2", agent: "crew/a" },
    ];

    it("ScheduleAnyway: each discussion's triage goes to another provider than its mulling", () => {
      const plain = snapshot({ models, providers, agents: [agent("a")], policies: [policy("p", { rules })] });
      expect(where(discuss(plain, threads))).toEqual({ d1: "gpu-a gpu-a", d2: "gpu-a gpu-a" });
      const spreadOut = discuss(
        { ...plain, policies: [policy("p", { rules, spread: spread("ScheduleAnyway") })] },
        threads,
      );
      // Per discussion: d2 spreads its own phases, whatever d1 took.
      expect(where(spreadOut)).toEqual({ d1: "gpu-a gpu-b", d2: "gpu-a gpu-b" });
    });

    it("ScheduleAnyway falls back to the one feasible provider; DoNotSchedule refuses triage", () => {
      const one = {
        models: [model("m", { provider: "gpu-a" })],
        providers: [provider("gpu-a", { maxParallel: 100 })],
        agents: [agent("a")],
      };
      const anyway = discuss(
        snapshot({ ...one, policies: [policy("p", { spread: spread("ScheduleAnyway") })] }),
        threads,
      );
      expect(where(anyway)).toEqual({ d1: "gpu-a gpu-a", d2: "gpu-a gpu-a" });
      expect(anyway.every((p) => p.unschedulable === undefined)).toBe(true);

      const strict = discuss(
        snapshot({ ...one, policies: [policy("p", { spread: spread("DoNotSchedule") })] }),
        threads,
      );
      expect(where(strict)).toEqual({ d1: "gpu-a -", d2: "gpu-a -" });
      const reason =
        "topologySpread DoNotSchedule: no feasible Model for require selectors {} outside provider=gpu-a (taken by mulling)";
      expect(strict.filter((p) => p.phase === "triage").map((p) => p.unschedulable)).toEqual([
        reason,
        reason,
      ]);
      expect(strict.filter((p) => p.phase === "mulling").map((p) => p.unschedulable)).toEqual([
        undefined,
        undefined,
      ]);
    });
  });

  it("zero match: the phase carries the §6 reason and no binding", () => {
    const s = snapshot({
      models: [model("qwen3-8b", { id: "qwen3:8b", labels: qwen("8B", "low") })],
      providers: [provider("gpu-a")],
      agents: [agent("a")],
      policies: [policy("p", { rules: [{ phase: "mulling", require: { matchLabels: { params: "70B" } } }] })],
    });
    const [mulling, triage] = discuss(s, [{ threadId: "t", agent: "crew/a" }]);
    expect(mulling).toEqual({
      threadId: "t",
      agent: "crew/a",
      phase: "mulling",
      candidates: [],
      unschedulable: "no Model matches require selectors {params: 70B}",
    });
    // triage has no rule: any Model; no mulling pick, so no fallback either.
    expect(triage).toMatchObject({ phase: "triage", binding: { model: "qwen3:8b", provider: "gpu-a" } });
    expect(triage!.unschedulable).toBeUndefined();
  });

  it("an unknown agent: both phases unschedulable, naming it; an agent without a policy: §6's reason", () => {
    const s = snapshot({
      models: [model("m")],
      providers: [provider("gpu-a")],
      agents: [agent("a"), agent("loner", { crew: null })],
      policies: [policy("p")],
    });
    const out = discuss(s, [
      { threadId: "t1", agent: "crew/ghost" },
      { threadId: "t2", agent: "crew/loner" },
      { threadId: "t3", agent: "crew/a" },
    ]);
    const noPolicy = "no CrewSchedulingPolicy applies: the agent has no kubemoot.ai/crew label";
    expect(out.map((p) => [p.threadId, p.phase, p.binding?.provider, p.unschedulable])).toEqual([
      ["t1", "mulling", undefined, "no Agent crew/ghost"],
      ["t1", "triage", undefined, "no Agent crew/ghost"],
      ["t2", "mulling", undefined, noPolicy],
      ["t2", "triage", undefined, noPolicy],
      ["t3", "mulling", "gpu-a", undefined],
      ["t3", "triage", "gpu-a", undefined],
    ]);
    expect(out[0]!.candidates).toEqual([]);
  });

  describe("determinism", () => {
    // The load term makes the order matter: mulling gpu-a 100, gpu-b 92, 2 slots each, and each
    // thread already bound to a provider costs ⌊10·n/2⌋ there (bind-spread.test.ts's toolers).
    const s = snapshot({
      models: [model("m-a", { provider: "gpu-a" }), model("m-b", { provider: "gpu-b" })],
      providers: [provider("gpu-a", { maxParallel: 2 }), provider("gpu-b", { maxParallel: 2, weight: 92 })],
      agents: [agent("a", { role: "tooler" })],
      policies: [policy("p", { rules: [{ phase: "mulling" }] })],
    });
    // Odd ids, code-point order: "t 2" < "t/1" < "t:3" < "tü4".
    const threads = ["t/1", "t 2", "t:3", "tü4"].map((threadId) => ({ threadId, agent: "crew/a" }));

    it("the same input gives the same output, whatever the order of the threads", () => {
      const out = discuss(s, threads);
      // mulling as bind-spread.test.ts's t1..t4; triage (gpu-a −100, gpu-b −92) likewise.
      expect(out.map((p) => `${p.threadId} ${p.phase} ${p.binding?.provider}`)).toEqual([
        "t 2 mulling gpu-a",
        "t 2 triage gpu-b",
        "t/1 mulling gpu-a",
        "t/1 triage gpu-b",
        "t:3 mulling gpu-b",
        "t:3 triage gpu-a",
        "tü4 mulling gpu-a",
        "tü4 triage gpu-b",
      ]);
      expect(discuss(s, threads)).toEqual(out);
      expect(discuss(s, [...threads].reverse())).toEqual(out);
      expect(discuss(s, [threads[2]!, threads[0]!, threads[3]!, threads[1]!])).toEqual(out);
    });

    it("a threadId given twice is refused", () => {
      expect(() => discuss(s, [threads[0]!, threads[0]!])).toThrow(
        expect.objectContaining({ field: "threads" }),
      );
    });
  });

  it("an Agent named like a synthetic one does not collide: threads map back by thread", () => {
    const s = snapshot({
      models: [model("m")],
      providers: [provider("gpu-a")],
      agents: [agent("discussion-0"), agent("discussion-1", { crew: null })],
      policies: [policy("p")],
    });
    const out = discuss(s, [
      { threadId: "x", agent: "crew/discussion-1" },
      { threadId: "crew/discussion-0", agent: "crew/discussion-0" },
    ]);
    expect(out.map((p) => [p.threadId, p.agent, p.binding?.provider ?? p.unschedulable])).toEqual([
      ["crew/discussion-0", "crew/discussion-0", "gpu-a"],
      ["crew/discussion-0", "crew/discussion-0", "gpu-a"],
      ["x", "crew/discussion-1", "no CrewSchedulingPolicy applies: the agent has no kubemoot.ai/crew label"],
      ["x", "crew/discussion-1", "no CrewSchedulingPolicy applies: the agent has no kubemoot.ai/crew label"],
    ]);
  });
});
