import { describe, expect, it } from "vitest";
import { SETTINGS } from "../settings/index.js";
import { schedulerConfigFromEnv } from "./config.js";

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
    expect(() => SETTINGS.costWeights.parse(raw)).toThrow(message);
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

describe("the scheduler's variables", () => {
  it("has the documented defaults", () => {
    const c = schedulerConfigFromEnv({});
    expect(c).toMatchObject({
      agent: "",
      crew: "",
      tolerance: 10,
      waitLimitS: 90,
      leaseS: 150,
      policy: "time",
    });
    expect(c.candidatesMulling).toEqual([]);
    expect(c.staticMulling).toBeUndefined();
  });

  it("reads the wait limit, else the synthesis timeout", () => {
    expect(schedulerConfigFromEnv({ KUBEMOOT_DISCUSS_SYNTHESIS_TIMEOUT_SECONDS: "40" }).waitLimitS).toBe(40);
    expect(
      schedulerConfigFromEnv({
        KUBEMOOT_DISCUSS_SYNTHESIS_TIMEOUT_SECONDS: "40",
        KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS: "0",
      }).waitLimitS,
    ).toBe(0);
  });

  it("reads the agent pair and the static bindings, each pair whole", () => {
    const c = schedulerConfigFromEnv({
      KUBEMOOT_NAMESPACE: "crew",
      KUBEMOOT_AGENT_NAME: "a",
      KUBEMOOT_TRIAGE_MODEL_MODEL_ID: "qwen3:8b",
      KUBEMOOT_TRIAGE_MODEL_ENDPOINT: "http://gpu:11434",
    });
    expect(c.agent).toBe("crew/a");
    expect(c.staticTriage).toEqual({ model: "qwen3:8b", endpoint: "http://gpu:11434" });
    expect(schedulerConfigFromEnv({ KUBEMOOT_NAMESPACE: "crew" }, "other/b").agent).toBe("other/b");
  });

  it.each<[Record<string, string>, string]>([
    [
      { KUBEMOOT_NAMESPACE: "crew" },
      "KUBEMOOT_AGENT_NAME: set both KUBEMOOT_NAMESPACE and KUBEMOOT_AGENT_NAME",
    ],
    [{ KUBEMOOT_MODEL_MODEL: "m" }, "KUBEMOOT_MODEL_ENDPOINT: set together with KUBEMOOT_MODEL_MODEL"],
    [
      { KUBEMOOT_TRIAGE_MODEL_ENDPOINT: "http://gpu:1" },
      "KUBEMOOT_TRIAGE_MODEL_MODEL_ID: set together with KUBEMOOT_TRIAGE_MODEL_ENDPOINT",
    ],
    [
      { KUBEMOOT_MODEL_CANDIDATE_TOLERANCE: "wide" },
      'KUBEMOOT_MODEL_CANDIDATE_TOLERANCE: expected a number, got "wide"',
    ],
    [
      { KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS: "-1" },
      "KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS: expected a number ≥ 0",
    ],
    [
      { KUBEMOOT_DISCUSS_SYNTHESIS_TIMEOUT_SECONDS: "0", KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS: "5" },
      "KUBEMOOT_DISCUSS_SYNTHESIS_TIMEOUT_SECONDS: expected a number ≥ 1",
    ],
    [{ KUBEMOOT_CREW: "pilot" }, 'KUBEMOOT_CREW: expected NAMESPACE/NAME, got "pilot"'],
    [{ KUBEMOOT_POLICY: "fast" }, 'KUBEMOOT_POLICY: expected one of "time", "kubemoot", got "fast"'],
  ])("refuses %o naming the variable", (env, message) => {
    expect(() => schedulerConfigFromEnv(env)).toThrow(message);
  });
});
