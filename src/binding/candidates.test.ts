import { describe, expect, it } from "vitest";
import { model, phaseContext, qwen } from "../../test/binding/fixtures.js";
import { candidateList } from "./candidates.js";

const bundle = [
  model("qwen3-32b", { id: "qwen3:32b", labels: qwen("32B", "high") }),
  model("qwen3-14b-a", { id: "qwen3:14b", labels: qwen("14B", "medium"), provider: "gpu-a" }),
  model("qwen3-14b-b", { id: "qwen3:14b", labels: qwen("14B", "medium"), provider: "gpu-b" }),
  model("qwen3-8b", { id: "qwen3:8b", labels: qwen("8B", "low"), provider: "gpu-b" }),
];

describe("candidate lists", () => {
  it("one entry per model id, by quality score: the spec's example at b = 0.7", () => {
    const ctx = phaseContext({ bias: 0.7 });
    expect(candidateList(ctx, bundle)).toEqual([
      { model: "qwen3:32b", score: 70 },
      { model: "qwen3:14b", score: 60 },
      { model: "qwen3:8b", score: 30 },
    ]);
  });

  it("the bound model comes first whatever its score", () => {
    const ctx = phaseContext({ bias: 0.7 });
    expect(candidateList(ctx, bundle, bundle[3])).toEqual([
      { model: "qwen3:8b", score: 30 },
      { model: "qwen3:32b", score: 70 },
      { model: "qwen3:14b", score: 60 },
    ]);
  });

  it("a model id keeps its best quality score across Models", () => {
    const models = [
      model("fast", { id: "qwen3:14b", labels: { latencyClass: "low" } }),
      model("slow", { id: "qwen3:14b", labels: { latencyClass: "high" } }),
    ];
    expect(candidateList(phaseContext({ bias: 0.9 }), models)).toEqual([{ model: "qwen3:14b", score: 90 }]);
    expect(candidateList(phaseContext({ bias: 0.1 }), models)).toEqual([{ model: "qwen3:14b", score: 90 }]);
  });

  it("equal scores order by id", () => {
    const ctx = phaseContext({ bias: 0.5 });
    // b = 0.5: high 50, low 50, medium 100
    expect(candidateList(ctx, bundle).map((c) => c.model)).toEqual(["qwen3:14b", "qwen3:32b", "qwen3:8b"]);
  });

  it("uses prefer weights, not the bias, when the rule has prefer", () => {
    const ctx = phaseContext({
      bias: 0.7,
      rule: { prefer: [{ weight: 100, selector: { matchLabels: { latencyClass: "low" } } }] },
    });
    expect(candidateList(ctx, bundle)).toEqual([
      { model: "qwen3:8b", score: 100 },
      { model: "qwen3:14b", score: 0 },
      { model: "qwen3:32b", score: 0 },
    ]);
  });

  it("only Ready Models the require admits; providers are not checked", () => {
    const ctx = phaseContext({
      rule: { require: { matchExpressions: [{ key: "params", operator: "In", values: ["14B", "32B"] }] } },
    });
    const models = [
      ...bundle,
      model("qwen3-32b-down", {
        id: "qwen3:32b-q8",
        labels: qwen("32B", "high"),
        ready: false,
        provider: "nowhere",
      }),
    ];
    expect(candidateList(ctx, models).map((c) => c.model)).toEqual(["qwen3:14b", "qwen3:32b"]);
  });

  it("an invalid require lists nothing", () => {
    const ctx = phaseContext({
      rule: { require: { matchExpressions: [{ key: "params", operator: "Bad" }] } },
    });
    expect(candidateList(ctx, bundle)).toEqual([]);
  });

  it("a bound model the rule does not admit (triage fallback) still leads the list", () => {
    const ctx = phaseContext({ bias: 0.7, rule: { require: { matchLabels: { params: "8B" } } } });
    expect(candidateList(ctx, bundle, bundle[0])).toEqual([
      { model: "qwen3:32b", score: 70 },
      { model: "qwen3:8b", score: 30 },
    ]);
  });
});
