import { describe, expect, it } from "vitest";
import { compileSelector, labelKeyError, labelValueError } from "./selector.js";
import type { LabelSelector, Labels } from "./types.js";

const labels: Labels = {
  family: "qwen3",
  params: "32B",
  "capability/tool-calling": "true",
  latencyClass: "high",
};

function matches(sel: LabelSelector | undefined, l: Labels = labels): boolean {
  const c = compileSelector(sel);
  if (!c.ok) throw new Error(c.error);
  return c.selector.matches(l);
}

describe("selector matching", () => {
  it.each<[string, LabelSelector | undefined, boolean]>([
    ["absent selects everything", undefined, true],
    ["empty selects everything", {}, true],
    ["matchLabels equal", { matchLabels: { family: "qwen3" } }, true],
    ["matchLabels all must hold", { matchLabels: { family: "qwen3", params: "14B" } }, false],
    ["matchLabels missing key", { matchLabels: { gpu: "yes" } }, false],
    ["In hit", { matchExpressions: [{ key: "params", operator: "In", values: ["14B", "32B"] }] }, true],
    ["In miss", { matchExpressions: [{ key: "params", operator: "In", values: ["8B"] }] }, false],
    ["In on an absent key", { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }, false],
    ["NotIn hit", { matchExpressions: [{ key: "params", operator: "NotIn", values: ["8B"] }] }, true],
    [
      "NotIn miss",
      { matchExpressions: [{ key: "params", operator: "NotIn", values: ["32B", "8B"] }] },
      false,
    ],
    [
      "NotIn on an absent key",
      { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] },
      true,
    ],
    ["Exists hit", { matchExpressions: [{ key: "capability/tool-calling", operator: "Exists" }] }, true],
    ["Exists miss", { matchExpressions: [{ key: "capability/reasoning", operator: "Exists" }] }, false],
    ["DoesNotExist hit", { matchExpressions: [{ key: "deprecated", operator: "DoesNotExist" }] }, true],
    ["DoesNotExist miss", { matchExpressions: [{ key: "family", operator: "DoesNotExist" }] }, false],
    [
      "labels and expressions are ANDed",
      {
        matchLabels: { "capability/tool-calling": "true" },
        matchExpressions: [{ key: "params", operator: "In", values: ["14B"] }],
      },
      false,
    ],
  ])("%s", (_name, sel, want) => {
    expect(matches(sel)).toBe(want);
  });

  it("Exists with an empty-string value still exists", () => {
    expect(matches({ matchExpressions: [{ key: "x", operator: "Exists" }] }, { x: "" })).toBe(true);
  });
});

describe("selector rendering", () => {
  it.each<[LabelSelector | undefined, string]>([
    [undefined, "{}"],
    [
      {
        matchLabels: { "capability/tool-calling": "true" },
        matchExpressions: [{ key: "params", operator: "In", values: ["14B", "32B"] }],
      },
      "{capability/tool-calling: true, params: 14B|32B}",
    ],
    // written in another order, the same text: terms by key, values sorted
    [
      {
        matchExpressions: [{ key: "params", operator: "In", values: ["32B", "14B"] }],
        matchLabels: { "capability/tool-calling": "true" },
      },
      "{capability/tool-calling: true, params: 14B|32B}",
    ],
    [{ matchExpressions: [{ key: "params", operator: "NotIn", values: ["8B"] }] }, "{params: !8B}"],
    [
      { matchExpressions: [{ key: "params", operator: "NotIn", values: ["8B", "0.6B"] }] },
      "{params: !(0.6B|8B)}",
    ],
    [{ matchExpressions: [{ key: "capability/reasoning", operator: "Exists" }] }, "{capability/reasoning}"],
    [{ matchExpressions: [{ key: "deprecated", operator: "DoesNotExist" }] }, "{!deprecated}"],
    [{ matchLabels: { b: "2", a: "1" } }, "{a: 1, b: 2}"],
    [{ matchLabels: { a: "" } }, '{a: ""}'],
    [
      {
        matchLabels: { family: "qwen3" },
        matchExpressions: [{ key: "family", operator: "Exists" }],
      },
      "{family: qwen3, family}",
    ],
  ])("%j → %s", (sel, text) => {
    const c = compileSelector(sel);
    expect(c.ok && c.selector.text).toBe(text);
  });
});

describe("invalid selectors are errors, not crashes", () => {
  it.each<[string, LabelSelector, string]>([
    [
      "unknown operator",
      { matchExpressions: [{ key: "params", operator: "Gt", values: ["1"] }] },
      'rule.matchExpressions[0].operator: "Gt" is not one of In, NotIn, Exists, DoesNotExist',
    ],
    [
      "operator is case-sensitive",
      { matchExpressions: [{ key: "params", operator: "in", values: ["1"] }] },
      'rule.matchExpressions[0].operator: "in" is not one of',
    ],
    [
      "In without values",
      { matchExpressions: [{ key: "params", operator: "In", values: [] }] },
      "rule.matchExpressions[0].values: In needs at least one value",
    ],
    [
      "NotIn without values",
      { matchExpressions: [{ key: "params", operator: "NotIn" }] },
      "rule.matchExpressions[0].values: NotIn needs at least one value",
    ],
    [
      "Exists with values",
      { matchExpressions: [{ key: "params", operator: "Exists", values: ["x"] }] },
      "rule.matchExpressions[0].values: Exists takes no values",
    ],
    [
      "DoesNotExist with values",
      { matchExpressions: [{ key: "params", operator: "DoesNotExist", values: ["x"] }] },
      "rule.matchExpressions[0].values: DoesNotExist takes no values",
    ],
    [
      "bad key",
      { matchExpressions: [{ key: "-bad", operator: "Exists" }] },
      'rule.matchExpressions[0].key: label key "-bad"',
    ],
    [
      "bad prefix",
      { matchLabels: { "Capability/x": "true" } },
      'rule.matchLabels["Capability/x"]: label key "Capability/x": the prefix',
    ],
    [
      "bad value",
      { matchLabels: { params: "14B|32B" } },
      'rule.matchLabels["params"]: label value "14B|32B"',
    ],
    [
      "bad In value",
      { matchExpressions: [{ key: "params", operator: "In", values: ["ok", "not ok"] }] },
      'rule.matchExpressions[0].values[1]: label value "not ok"',
    ],
    [
      "second expression",
      {
        matchExpressions: [
          { key: "a", operator: "Exists" },
          { key: "b", operator: "Nope" },
        ],
      },
      "rule.matchExpressions[1].operator",
    ],
  ])("%s", (_name, sel, error) => {
    const c = compileSelector(sel, "rule");
    expect(c.ok).toBe(false);
    expect(!c.ok && c.error).toContain(error);
  });
});

describe("label syntax", () => {
  it.each([
    ["family", true],
    ["capability/tool-calling", true],
    ["kubemoot.ai/crew", true],
    ["a".repeat(63), true],
    ["a".repeat(64), false],
    ["", false],
    ["/name", false],
    ["x/", false],
    ["has space", false],
    ["a_b.c-d", true],
  ])("key %j valid=%s", (key, ok) => {
    expect(labelKeyError(key) === undefined).toBe(ok);
  });

  it.each([
    ["", true],
    ["32B", true],
    ["0.6B", true],
    ["-x", false],
    ["a".repeat(64), false],
  ])("value %j valid=%s", (value, ok) => {
    expect(labelValueError(value) === undefined).toBe(ok);
  });

  it("a non-string value is invalid", () => {
    expect(labelValueError(true)).toContain("must be a string");
  });
});
