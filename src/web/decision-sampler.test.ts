// The decision sampler (docs/web-view.md "Decision records"): at most `ratePerS` records a second
// with a burst of one second's worth; a record that does not fit is carried as weight by the next
// record of its own kind, so the view's counts stay exact while the records are sampled.
import { describe, expect, it } from "vitest";
import { T0 } from "../../test/helpers/core-fixtures.js";
import { ManualClock } from "../../test/helpers/state-fixtures.js";
import { DecisionSampler } from "./decision-sampler.js";

describe("DecisionSampler", () => {
  it("gives a burst of one second's worth weight 1, then skips", () => {
    const clock = new ManualClock(T0);
    const s = new DecisionSampler(5, clock.now);
    expect(Array.from({ length: 5 }, () => s.take("placed"))).toEqual([1, 1, 1, 1, 1]);
    expect(s.take("placed")).toBeUndefined();
    expect(s.take("placed")).toBeUndefined();
  });

  it("carries the skipped count of the record's own kind only", () => {
    const clock = new ManualClock(T0);
    const s = new DecisionSampler(2, clock.now);
    expect(s.take("placed")).toBe(1);
    expect(s.take("refused")).toBe(1);
    // Out of tokens: two placements and one refusal are skipped.
    expect(s.take("placed")).toBeUndefined();
    expect(s.take("refused")).toBeUndefined();
    expect(s.take("placed")).toBeUndefined();
    clock.advance(1000);
    expect(s.take("placed")).toBe(3);
    expect(s.take("refused")).toBe(2);
    clock.advance(500);
    // The carried counts were paid out: the next of each kind stands for itself.
    expect(s.take("placed")).toBe(1);
    expect(s.take("released")).toBeUndefined();
    clock.advance(500);
    expect(s.take("released")).toBe(2);
  });

  it("refills at the rate, never above the burst", () => {
    const clock = new ManualClock(T0);
    const s = new DecisionSampler(4, clock.now);
    for (let i = 0; i < 4; i++) expect(s.take("placed")).toBe(1);
    expect(s.take("placed")).toBeUndefined();
    clock.advance(200);
    expect(s.take("placed")).toBeUndefined();
    clock.advance(100);
    // 300 ms at 4/s is 1.2 tokens: one record, carrying the two skipped.
    expect(s.take("placed")).toBe(3);
    clock.advance(60_000);
    // A long quiet time gives back the burst (4), not 240 tokens.
    const weights = Array.from({ length: 8 }, () => s.take("placed"));
    expect(weights.filter((w) => w !== undefined)).toHaveLength(4);
  });

  it("samples a rate under one a second with a burst of one", () => {
    const clock = new ManualClock(T0);
    const s = new DecisionSampler(0.5, clock.now);
    expect(s.take("placed")).toBe(1);
    clock.advance(1000);
    expect(s.take("placed")).toBeUndefined();
    clock.advance(1000);
    expect(s.take("placed")).toBe(2);
  });

  it("publishes weights that add up to every call over a long run", () => {
    const clock = new ManualClock(T0);
    const s = new DecisionSampler(3, clock.now);
    const kinds = ["placed", "refused", "released"];
    const takes = new Map<string, number>();
    const weights = new Map<string, number>();
    let published = 0;
    let x = 12345;
    const step = (kind: string) => {
      takes.set(kind, (takes.get(kind) ?? 0) + 1);
      const w = s.take(kind);
      if (w === undefined) return;
      published++;
      weights.set(kind, (weights.get(kind) ?? 0) + w);
    };
    for (let i = 0; i < 5000; i++) {
      // A fixed pseudo-random mix of kinds and gaps (MINSTD), far above the rate on average.
      x = (x * 48271) % 2147483647;
      step(kinds[x % 3]!);
      clock.advance(x % 97);
    }
    // Flush what is still carried: one more record of each kind after a pause.
    clock.advance(10_000);
    for (const kind of kinds) step(kind);
    for (const kind of kinds) expect(weights.get(kind)).toBe(takes.get(kind));
    // The run was sampled: far fewer records than calls, yet no call was lost from the counts.
    expect(published).toBeLessThan(5003 / 2);
    expect(published).toBeGreaterThan(0);
    const elapsedS = (clock.ms - T0) / 1000;
    expect(published).toBeLessThanOrEqual(Math.ceil(3 * elapsedS) + 3);
  });

  it("publishes nothing at rate 0 (or a rate that is not a number)", () => {
    const clock = new ManualClock(T0);
    for (const rate of [0, -1, Number.NaN]) {
      const s = new DecisionSampler(rate, clock.now);
      for (let i = 0; i < 5; i++) {
        expect(s.take("placed")).toBeUndefined();
        clock.advance(1000);
      }
    }
  });
});
