import { describe, expect, it } from "vitest";
import { bumpRate, decayedRate } from "./decay.js";

describe("§8 rates decay with a 10-minute half-life and gain +1 per event", () => {
  it("halves after 10 minutes and quarters after 20", () => {
    expect(decayedRate(4, 0, 600_000)).toBeCloseTo(2, 12);
    expect(decayedRate(4, 0, 1_200_000)).toBeCloseTo(1, 12);
  });
  it("a future timestamp never inflates the rate", () => {
    expect(decayedRate(3, 10_000, 0)).toBe(3);
  });
  it("non-positive or non-finite rates read 0", () => {
    expect(decayedRate(-1, 0, 0)).toBe(0);
    expect(decayedRate(Number.NaN, 0, 0)).toBe(0);
  });
  it("bump decays to now, then adds one", () => {
    expect(bumpRate(2, 0, 600_000)).toBeCloseTo(2, 12);
  });
});
