import { describe, expect, it } from "vitest";
import { recordLatency } from "./latency-ema.js";

describe("§4 latency EMA: weight 0.4, the first sample seeds it", () => {
  it("seeds then moves 40% toward each sample", () => {
    const a = recordLatency(undefined, 1000);
    expect(a).toBe(1000);
    // 1000 + 0.4·(2000 − 1000) = 1400; 1400 + 0.4·(0 − 1400) = 840
    expect(recordLatency(a, 2000)).toBeCloseTo(1400, 10);
    expect(recordLatency(recordLatency(a, 2000), 0)).toBeCloseTo(840, 10);
  });
  it("ignores invalid samples", () => {
    expect(recordLatency(500, Number.NaN)).toBe(500);
    expect(recordLatency(undefined, -1)).toBeUndefined();
  });
});
