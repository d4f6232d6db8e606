import { describe, expect, it } from "vitest";
import { parseCostWeights, schedulerConfigFromEnv } from "./config.js";

describe("KUBEMOOT_COST_WEIGHTS", () => {
  it("is absent by default (the spec's weights)", () => {
    expect(schedulerConfigFromEnv({}).costWeights).toBeUndefined();
  });
  it("reads name=value pairs", () => {
    expect(
      schedulerConfigFromEnv({ KUBEMOOT_COST_WEIGHTS: "contention=2, bestFit=12.5" }).costWeights,
    ).toEqual({
      contention: 2,
      bestFit: 12.5,
    });
  });
  it.each([
    ["contentio=2", /unknown weight "contentio"/],
    ["contention=-1", /contention: expected a number ≥ 0, got "-1"/],
    ["contention", /contention: expected a number ≥ 0, got ""/],
    ["bestFit=lots", /bestFit: expected a number ≥ 0, got "lots"/],
  ])("refuses %s with a message naming the variable", (raw, message) => {
    expect(() => parseCostWeights(raw)).toThrow(message);
    expect(() => schedulerConfigFromEnv({ KUBEMOOT_COST_WEIGHTS: raw })).toThrow(/KUBEMOOT_COST_WEIGHTS/);
  });
});
