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

describe("KUBEMOOT_PROVIDER_ENDPOINTS", () => {
  it("is empty by default: every endpoint allowed", () => {
    const list = schedulerConfigFromEnv({}).providerEndpoints;
    expect(list?.patterns).toEqual([]);
    expect(list?.allows("http://anything:1")).toBe(true);
  });
  it("reads the list", () => {
    const list = schedulerConfigFromEnv({
      KUBEMOOT_PROVIDER_ENDPOINTS: "gpu-1:11434, 10.0.0.0/8",
    }).providerEndpoints;
    expect(list?.allows("http://gpu-1:11434")).toBe(true);
    expect(list?.allows("http://127.0.0.1:11434")).toBe(false);
  });
  it("refuses a bad entry naming the variable and the entry", () => {
    expect(() => schedulerConfigFromEnv({ KUBEMOOT_PROVIDER_ENDPOINTS: "gpu-1:11434,gpu-2:0" })).toThrow(
      'KUBEMOOT_PROVIDER_ENDPOINTS: entry "gpu-2:0": port must be 1-65535',
    );
  });
});
