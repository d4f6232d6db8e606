import { describe, expect, it } from "vitest";
import { NO_SUCCESS_SAMPLES, recordOutcome, type SuccessRate, successRateValue } from "./success-rate.js";

function run(outcomes: boolean[]): SuccessRate {
  return outcomes.reduce((s, o) => recordOutcome(s, o), NO_SUCCESS_SAMPLES);
}

describe("§4 success rate: EMA weight 0.3, counts after 5 samples (before: 1.0)", () => {
  it("reads 1.0 before 5 samples, even after failures", () => {
    expect(successRateValue(undefined)).toBe(1);
    expect(successRateValue(run([false, false, false, false]))).toBe(1);
  });
  it("after 5 samples it is the EMA, seeded by the first outcome", () => {
    // seed 1; then fail: 1 + 0.3·(0 − 1) = 0.7; ok: 0.7 + 0.3·0.3 = 0.79; ok: 0.853; fail: 0.5971
    expect(successRateValue(run([true, false, true, true, false]))).toBeCloseTo(0.5971, 10);
  });
  it("five failures read 0", () => {
    expect(successRateValue(run([false, false, false, false, false]))).toBe(0);
  });
});
