import { describe, expect, it } from "vitest";
import { retryAfterS } from "./refusal-errors.js";

const busy = (estimatedWaitS?: number) => ({
  reason: "gpu-busy" as const,
  model: "qwen3:8b",
  message: "busy",
  largestContext: 0,
  promptTokens: 10,
  waitable: true,
  ...(estimatedWaitS !== undefined ? { estimatedWaitS } : {}),
});

describe("Retry-After on a gpu-busy 503", () => {
  it("uses the planner's queue estimate, rounded up", () => {
    expect(retryAfterS(busy(12.2), 7)).toBe(13);
    expect(retryAfterS(busy(0.2), 7)).toBe(1);
    expect(retryAfterS(busy(0), 7)).toBe(1); // an overdue call: any moment now
  });
  it("caps a long estimate at 60 s", () => {
    expect(retryAfterS(busy(3600), 7)).toBe(60);
  });
  it("falls back to the configured value without a usable estimate", () => {
    expect(retryAfterS(busy(), 7)).toBe(7);
    expect(retryAfterS(busy(Number.NaN), 7)).toBe(7);
  });
});
