import { describe, expect, it } from "vitest";
import { Backoff } from "./backoff.js";

describe("Backoff", () => {
  it("doubles from the initial delay up to the cap, and resets", () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1_000, jitter: 0 });
    expect([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(b.attempts).toBe(6);
    b.reset();
    expect(b.next()).toBe(100);
  });

  it("spreads by the jitter fraction and stays within [0, max]", () => {
    const low = new Backoff({ initialMs: 100, maxMs: 1_000, jitter: 0.2, random: () => 0 });
    const high = new Backoff({ initialMs: 100, maxMs: 1_000, jitter: 0.2, random: () => 0.999999 });
    expect(low.next()).toBe(80);
    expect(high.next()).toBe(120);
    const capped = new Backoff({ initialMs: 1_000, maxMs: 1_000, jitter: 0.5, random: () => 0.999999 });
    expect(capped.next()).toBe(1_000);
  });

  it("rejects nonsense settings", () => {
    expect(() => new Backoff({ initialMs: 0 })).toThrow(RangeError);
    expect(() => new Backoff({ initialMs: 10, maxMs: 5 })).toThrow(RangeError);
    expect(() => new Backoff({ jitter: 1 })).toThrow(RangeError);
  });
});
