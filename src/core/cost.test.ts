import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CostInput, costBreakdown, costOf, DEFAULT_COST_WEIGHTS } from "./cost.js";
import { usableMiB } from "./vram.js";

const U5090 = usableMiB(32605); // 28693
const U4090 = usableMiB(24563); // 21616

function input(over: Partial<CostInput>): CostInput {
  return {
    active: 0,
    maxParallel: 1,
    successRate: 1,
    publishedResidentMiB: 0,
    usableMiB: U4090,
    freeMiB: U4090,
    footprintMiB: 5979,
    warm: false,
    ...over,
  };
}

describe("§4 worked examples", () => {
  it("qwen3:8b cold on an empty 4090 ≈ 70.38: load 5 + best fit 25·(21616−5979)/5979", () => {
    const c = costBreakdown(input({}));
    expect(c.total).toBeCloseTo(70.383, 2);
    expect(c.bestFit).toBeCloseTo((25 * 15637) / 5979, 10);
  });
  it("qwen3:8b cold on an empty 5090 ≈ 99.97", () => {
    expect(costBreakdown(input({ usableMiB: U5090, freeMiB: U5090 })).total).toBeCloseTo(99.97, 2);
  });
  it("8b warm on the 4090 with 8 active tickets, 1 slot ≈ 73.4 (contention 8 + best fit)", () => {
    const c = costBreakdown(
      input({ warm: true, active: 8, freeMiB: U4090 - 5979, publishedResidentMiB: 5979 }),
    );
    expect(c.contention).toBe(8);
    expect(c.load).toBe(0);
    expect(c.total).toBeCloseTo(73.38, 2);
  });
  it("8b cold on a 5090 whose overlay holds 32b (27252) ≈ 187.9: idle eviction + load + best fit", () => {
    // free = 28693 − 27252 = 1441; evict = 50·(1 + (5979 − 1441)/5979) ≈ 87.95
    const c = costBreakdown(input({ usableMiB: U5090, freeMiB: U5090 - 27252 }));
    expect(c.evict).toBeCloseTo(50 * (1 + 4538 / 5979), 10);
    expect(c.total).toBeCloseTo(187.9, 1);
  });
});

describe("§4 each term", () => {
  it("contention = active / max(maxParallel, 1)", () => {
    expect(costBreakdown(input({ active: 3, maxParallel: 4 })).contention).toBe(0.75);
    expect(costBreakdown(input({ active: 3, maxParallel: 0 })).contention).toBe(3);
  });
  it("a configured contention weight multiplies the term (default 1, the spec's table)", () => {
    const w = { ...DEFAULT_COST_WEIGHTS, contention: 2 };
    const c = input({ active: 3, maxParallel: 4 });
    expect(costBreakdown(c, w).contention).toBe(1.5);
    expect(costOf(c, w)).toBeCloseTo(costBreakdown(c, w).total, 12);
    expect(costOf(c, w) - costOf(c)).toBeCloseTo(0.75, 12);
  });
  it("reliability = 0.5·(1 − successRate)", () => {
    expect(costBreakdown(input({ successRate: 0.6 })).reliability).toBeCloseTo(0.2, 12);
  });
  it("spill 20 only when the published residents exceed usable", () => {
    expect(costBreakdown(input({ publishedResidentMiB: U4090 })).spill).toBe(0);
    expect(costBreakdown(input({ publishedResidentMiB: U4090 + 1 })).spill).toBe(20);
  });
  it("evict: 0 when F ≤ free (equality), 1000 with live work, 50·(1 + min(1, short/F)) idle", () => {
    expect(costBreakdown(input({ freeMiB: 5979 })).evict).toBe(0);
    expect(costBreakdown(input({ freeMiB: 5978, active: 1 })).evict).toBe(1000);
    expect(costBreakdown(input({ freeMiB: 0 })).evict).toBe(100);
    expect(costBreakdown(input({ freeMiB: 0, warm: true })).evict).toBe(0);
  });
  it("best fit applies warm and cold alike, 0 when F ≥ usable or F unknown", () => {
    expect(costBreakdown(input({ warm: true })).bestFit).toBe(costBreakdown(input({})).bestFit);
    expect(costBreakdown(input({ footprintMiB: U4090 + 10 })).bestFit).toBe(0);
    expect(costBreakdown(input({ footprintMiB: 0, warm: true })).bestFit).toBe(0);
  });
});

describe("costOf is the sum of costBreakdown's terms", () => {
  it("property: equal for any input", () => {
    fc.assert(
      fc.property(
        fc.record({
          active: fc.integer({ min: 0, max: 20 }),
          maxParallel: fc.integer({ min: 0, max: 4 }),
          successRate: fc.double({ min: 0, max: 1, noNaN: true }),
          publishedResidentMiB: fc.integer({ min: 0, max: 90_000 }),
          usableMiB: fc.integer({ min: 0, max: 80_000 }),
          freeMiB: fc.integer({ min: 0, max: 80_000 }),
          footprintMiB: fc.integer({ min: -1, max: 60_000 }),
          warm: fc.boolean(),
        }),
        (c) => {
          const b = costBreakdown(c);
          expect(costOf(c)).toBeCloseTo(
            b.contention + b.reliability + b.spill + b.load + b.evict + b.bestFit,
            9,
          );
        },
      ),
    );
  });
});
