import { describe, expect, it } from "vitest";
import { policy } from "../../test/binding/fixtures.js";
import { archetypeIndex, CONSENT_3 } from "./archetypes.js";
import { compilePolicy, ruleFor } from "./policy.js";

const archetypes = archetypeIndex([]);

describe("policy compilation", () => {
  it("a valid policy has no problems", () => {
    const c = compilePolicy(
      policy("p", {
        rules: [{ phase: "mulling", require: { matchLabels: { family: "qwen3" } } }, { phase: "triage" }],
        qualityBias: { default: "0.5" },
        spread: {
          whenUnsatisfiable: "ScheduleAnyway",
          topologyKey: "provider",
          phaseKeys: ["mulling", "triage"],
        },
      }),
      archetypes,
    );
    expect(c.problems).toEqual([]);
    expect(c.unknownPhases).toEqual([]);
  });

  it("phases not in the archetype are reported (rules and phaseKeys), sorted", () => {
    const c = compilePolicy(
      policy("p", {
        rules: [{ phase: "mulling" }, { phase: "pondering" }],
        spread: {
          whenUnsatisfiable: "ScheduleAnyway",
          topologyKey: "provider",
          phaseKeys: ["mulling", "brooding"],
        },
      }),
      archetypes,
    );
    expect(c.unknownPhases).toEqual(["brooding", "pondering"]);
    expect(c.problems.map((p) => p.reason)).toEqual(["UnknownPhase"]);
    expect(c.problems[0]!.message).toBe(
      "phases brooding, pondering are not declared by MootArchetype consent-3 (mulling, triage, evaluating, synthesis)",
    );
  });

  it("a missing archetype is reported and phases are not validated", () => {
    const c = compilePolicy(
      policy("p", { archetypeRef: "debate-2", rules: [{ phase: "anything" }] }),
      archetypes,
    );
    expect(c.archetypeFound).toBe(false);
    expect(c.unknownPhases).toEqual([]);
    expect(c.problems).toEqual([
      {
        reason: "ArchetypeNotFound",
        message: "spec.archetypeRef: MootArchetype debate-2 not found; phases not validated",
      },
    ]);
  });

  it("an invalid require is reported and kept as the rule's error", () => {
    const c = compilePolicy(
      policy("p", {
        rules: [{ phase: "mulling", require: { matchExpressions: [{ key: "params", operator: "Gt" }] } }],
      }),
      archetypes,
    );
    expect(c.problems).toEqual([
      {
        reason: "InvalidSelector",
        message:
          'spec.rules[0].require.matchExpressions[0].operator: "Gt" is not one of In, NotIn, Exists, DoesNotExist',
      },
    ]);
    expect(ruleFor(c, "mulling").require.ok).toBe(false);
  });

  it("an invalid prefer term is skipped, the block still counts as present", () => {
    const c = compilePolicy(
      policy("p", {
        rules: [
          {
            phase: "mulling",
            prefer: [
              { weight: 10, selector: { matchExpressions: [{ key: "a", operator: "In" }] } },
              { weight: 20, selector: { matchLabels: { a: "b" } } },
            ],
          },
        ],
      }),
      archetypes,
    );
    const rule = ruleFor(c, "mulling");
    expect(rule.prefer.map((p) => p.weight)).toEqual([20]);
    expect(rule.hasPrefer).toBe(true);
    expect(c.problems[0]!.message).toBe(
      "spec.rules[0].prefer[0].selector.matchExpressions[0].values: In needs at least one value (term ignored)",
    );
  });

  it("a second rule for a phase is reported and ignored", () => {
    const c = compilePolicy(
      policy("p", {
        rules: [{ phase: "mulling", require: { matchLabels: { a: "1" } } }, { phase: "mulling" }],
      }),
      archetypes,
    );
    expect(c.problems.map((p) => p.reason)).toEqual(["DuplicateRule"]);
    const rule = ruleFor(c, "mulling");
    expect(rule.require.ok && rule.require.selector.text).toBe("{a: 1}");
  });

  it("invalid quality-bias values are reported (and ignored by scoring)", () => {
    const c = compilePolicy(
      policy("p", { qualityBias: { reasoning: "abc", x: "1.5", ok: "0.5" } }),
      archetypes,
    );
    expect(c.problems).toEqual([
      {
        reason: "InvalidQualityBias",
        message: 'spec.qualityBias: reasoning: "abc", x: "1.5" ignored (not a number in [0, 1])',
      },
    ]);
  });

  it("a phase without a rule admits every Model with no prefer block", () => {
    const rule = ruleFor(compilePolicy(policy("p"), archetypes), "triage");
    expect(rule.implicit).toBe(true);
    expect(rule.hasPrefer).toBe(false);
    expect(rule.require.ok && rule.require.selector.text).toBe("{}");
  });

  it("a manifest archetype overrides the built-in one of the same name", () => {
    const custom = { name: "consent-3", spec: { phases: [{ name: "mulling" }] } };
    const c = compilePolicy(policy("p", { rules: [{ phase: "triage" }] }), archetypeIndex([custom]));
    expect(c.unknownPhases).toEqual(["triage"]);
    expect(archetypeIndex([]).get("consent-3")).toBe(CONSENT_3);
  });
});
