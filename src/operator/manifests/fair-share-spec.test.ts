// A CrewSchedulingPolicy's spec.fairShare (docs/rules/fairness.md §2): read into the binder's
// typed policy, and refused with the field named when its weight or a band is not one.
import { describe, expect, it } from "vitest";
import { formatIssue } from "../../manifests/index.js";
import { parseManifests } from "./parse.js";

const policy = (fairShare: string) =>
  `apiVersion: kubemoot.ai/v1alpha1\nkind: CrewSchedulingPolicy\nmetadata: { name: pol, namespace: crew }\nspec: { crewRef: c, fairShare: ${fairShare} }\n`;
const parse = (text: string) => parseManifests([{ file: "m.yaml", text }]);

describe("CrewSchedulingPolicy spec.fairShare", () => {
  it("reads a weight and the crew's bands", () => {
    const { set, issues } = parse(policy("{ weight: 4, priority: batch, maxPriority: standard }"));
    expect(issues).toEqual([]);
    expect(set.policies[0]?.spec.fairShare).toEqual({
      weight: 4,
      priority: "batch",
      maxPriority: "standard",
    });
  });

  it.each([
    ["{ weight: 0 }", "spec.fairShare.weight: expected an integer ≥ 1, got number 0"],
    ["{ weight: 1.5 }", "spec.fairShare.weight: expected an integer ≥ 1, got number 1.5"],
    [
      "{ maxPriority: urgent }",
      'spec.fairShare.maxPriority: expected one of interactive, standard, batch, got "urgent"',
    ],
  ])("%s is refused, naming the field", (spec, want) => {
    const got = parse(policy(spec)).issues.map(formatIssue);
    expect(got).toEqual([`m.yaml (document 1, CrewSchedulingPolicy crew/pol): ${want}`]);
  });
});
