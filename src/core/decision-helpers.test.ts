import { describe, expect, it } from "vitest";
import { refusalOf, shouldWait, staticFallbackAllowed } from "./decision-helpers.js";
import type { Decision } from "./planner.js";

const claim: Decision = {
  kind: "claim",
  provider: "a",
  endpoint: "",
  model: "m",
  cold: false,
  loading: false,
  footprintMiB: 1,
  contextLength: 0,
  evicts: {},
  step: 1,
  cost: 0,
};
const queue: Decision = { kind: "queue", provider: "a", model: "m", estimatedWaitS: 3, message: "busy" };
const wait: Decision = { kind: "wait-for-memory", model: "m", message: "busy" };
const refuse = (reason: "gpu-busy" | "model-too-large" | "prompt-too-large"): Decision => ({
  kind: "refuse",
  reason,
  model: "m",
  message: "x",
  largestContext: 0,
});

describe("§5/§6 what callers do with a decision", () => {
  it("queue and wait-for-memory are gpu-busy now, and the caller waits", () => {
    expect(refusalOf(queue)?.reason).toBe("gpu-busy");
    expect(refusalOf(wait)?.reason).toBe("gpu-busy");
    expect(shouldWait(queue) && shouldWait(wait)).toBe(true);
    expect(shouldWait(refuse("gpu-busy"))).toBe(false);
    expect(refusalOf(claim)).toBeUndefined();
  });
  it("a queue decision carries its wait estimate; waiting for memory has none", () => {
    expect(refusalOf(queue)?.estimatedWaitS).toBe(3);
    expect(refusalOf(wait)?.estimatedWaitS).toBeUndefined();
  });
  it("a call that cannot wait falls back on gpu-busy and model-too-large, never on prompt-too-large", () => {
    expect(staticFallbackAllowed(queue)).toBe(true);
    expect(staticFallbackAllowed(refuse("model-too-large"))).toBe(true);
    expect(staticFallbackAllowed(refuse("prompt-too-large"))).toBe(false);
    expect(staticFallbackAllowed(claim)).toBe(false);
  });
});
