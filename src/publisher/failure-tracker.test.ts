import { describe, expect, it } from "vitest";
import { ProbeFailureTracker } from "./failure-tracker.js";

describe("ProbeFailureTracker", () => {
  it("stays ready through two failures and flips on the third (default threshold 3)", () => {
    const t = new ProbeFailureTracker();
    expect(t.ready).toBe(true);
    expect(t.failure("ECONNREFUSED")).toMatchObject({
      ready: true,
      consecutiveFailures: 1,
      becameUnready: false,
    });
    expect(t.failure("ECONNREFUSED")).toMatchObject({
      ready: true,
      consecutiveFailures: 2,
      becameUnready: false,
    });
    expect(t.failure("timeout")).toEqual({
      ready: false,
      consecutiveFailures: 3,
      becameUnready: true,
      recovered: false,
      lastError: "timeout",
    });
    expect(t.failure("timeout")).toMatchObject({
      ready: false,
      becameUnready: false,
      consecutiveFailures: 4,
    });
    expect(t.lastError).toBe("timeout");
  });

  it("one success resets the count and reports the recovery once", () => {
    const t = new ProbeFailureTracker(2);
    t.failure("x");
    expect(t.success()).toMatchObject({ ready: true, recovered: false, consecutiveFailures: 0 });
    t.failure("x");
    expect(t.failure("x").becameUnready).toBe(true);
    expect(t.success()).toMatchObject({ ready: true, recovered: true });
    expect(t.success().recovered).toBe(false);
    expect(t.lastError).toBeUndefined();
    // Failures are counted again from zero.
    expect(t.failure("y").ready).toBe(true);
  });

  it("a threshold of 1 flips on the first failure; invalid thresholds are refused", () => {
    expect(new ProbeFailureTracker(1).failure("x").ready).toBe(false);
    expect(() => new ProbeFailureTracker(0)).toThrow(RangeError);
    expect(() => new ProbeFailureTracker(1.5)).toThrow(RangeError);
  });
});
