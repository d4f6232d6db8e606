// What the binder hands the operator to write (status, conditions, env, the dry-run document)
// and its options.
import { describe, expect, it } from "vitest";
import { only, run } from "../../test/binding/bind-helpers.js";
import { agent, model, NOW, policy, provider, qwen, snapshot } from "../../test/binding/fixtures.js";
import { toDryRun } from "./dry-run.js";

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

  it("a policy's fairShare becomes the crew's fair-share env (docs/rules/fairness.md §2)", () => {
    const p = policy("p");
    const fair = {
      ...s,
      policies: [
        {
          ...p,
          spec: {
            ...p.spec,
            fairShare: { weight: 4, priority: "batch" as const, maxPriority: "standard" as const },
          },
        },
      ],
    };
    const env = only(run(fair)).env;
    expect(env).toMatchObject({
      KUBEMOOT_CREW_WEIGHT: "4",
      KUBEMOOT_PRIORITY: "batch",
      KUBEMOOT_CREW_MAX_PRIORITY: "standard",
    });
    // Without one, none of them: the sidecar's defaults hold.
    expect(
      Object.keys(only(run(s)).env).filter((k) => k.includes("PRIORITY") || k.includes("WEIGHT")),
    ).toEqual([]);
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
    expect(Object.keys(entry.mulling!)).toEqual([
      "model",
      "modelRef",
      "provider",
      "endpoint",
      "engine",
      "score",
    ]);
    expect(Object.keys(entry.candidates)).toEqual(["mulling", "triage"]);
    expect(entry.mulling).toEqual({
      model: "qwen3:14b",
      modelRef: "qwen3-14b",
      provider: "gpu-a",
      endpoint: "http://ollama-a:11434",
      engine: "ollama",
      score: 60 + 100, // medium at 0.3 + mulling weight; unknown VRAM: capacity 0
    });
  });

  it("names the engine of the provider each phase is bound to", () => {
    const mixed = {
      ...s,
      providers: s.providers.map((p) => ({ ...p, spec: { ...p.spec, engine: "vllm" as const } })),
    };
    const doc = toDryRun(run(mixed));
    expect(doc.agents["crew/a"]!.mulling).toMatchObject({ provider: "gpu-a", engine: "vllm" });
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
