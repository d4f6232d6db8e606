import { describe, expect, it } from "vitest";
import { Rng } from "./rng.js";

describe("Rng", () => {
  it("is a function of its seed", () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const xs = Array.from({ length: 50 }, () => a.float());
    expect(Array.from({ length: 50 }, () => b.float())).toEqual(xs);
    expect(Array.from({ length: 50 }, () => new Rng(43).float())).not.toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it("forks independent streams: drawing from one never shifts another", () => {
    const root = new Rng(7);
    const a1 = root.fork("arrivals");
    const w1 = root.fork("work");
    const first = Array.from({ length: 10 }, () => w1.float());
    const a2 = new Rng(7).fork("arrivals");
    for (let i = 0; i < 100; i++) a2.float(); // the other stream draws more this time
    const w2 = new Rng(7).fork("work");
    expect(Array.from({ length: 10 }, () => w2.float())).toEqual(first);
    expect(a1.float()).not.toBe(first[0]);
  });

  it("draws integers in range and lognormals with the requested mean", () => {
    const r = new Rng(1);
    const ints = Array.from({ length: 2000 }, () => r.int(1, 3));
    expect(new Set(ints)).toEqual(new Set([1, 2, 3]));
    const n = 40_000;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += r.lognormal(20, 0.5);
    expect(sum / n).toBeGreaterThan(19.4);
    expect(sum / n).toBeLessThan(20.6);
    let e = 0;
    for (let i = 0; i < n; i++) e += r.exponential(3);
    expect(e / n).toBeGreaterThan(2.9);
    expect(e / n).toBeLessThan(3.1);
  });
});
