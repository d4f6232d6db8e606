// The policy registry: every name resolves to the policy of that name, the default is one of
// them, and an unknown name is refused with the list (callers validate names before this).
import { describe, expect, it } from "vitest";
import { DEFAULT_PLANNER_OPTIONS } from "../snapshot.js";
import { DEFAULT_POLICY, isPolicyName, POLICY_NAMES, policyNamed } from "./index.js";

describe("the policy registry", () => {
  it("holds the time and the weighted-cost policies, each under its own name", () => {
    expect(POLICY_NAMES).toEqual(["time", "kubemoot"]);
    for (const name of POLICY_NAMES) {
      expect(isPolicyName(name)).toBe(true);
      expect(policyNamed(name).name).toBe(name);
    }
  });

  it("has the planner's default first", () => {
    expect(DEFAULT_POLICY).toBe(DEFAULT_PLANNER_OPTIONS.policy);
    expect(POLICY_NAMES[0]).toBe(DEFAULT_POLICY);
  });

  it("refuses a name it does not hold, listing those it does", () => {
    expect(isPolicyName("weighted")).toBe(false);
    expect(() => policyNamed("weighted")).toThrow(
      /unknown placement policy "weighted" \(one of time, kubemoot\)/,
    );
  });
});
