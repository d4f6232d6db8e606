import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareRanked, type Ranked, rank } from "./ranking.js";

const r = (provider: string, cost: number, latencyEmaMs?: number, model = "m"): Ranked => ({
  provider,
  model,
  cost,
  latencyEmaMs,
});

describe("§4 ranking: cost, then latency EMA, then provider name, then model", () => {
  it("lower cost wins", () => {
    expect(rank([r("a", 2), r("b", 1)]).map((x) => x.provider)).toEqual(["b", "a"]);
  });
  it("ties go to the lower latency EMA; unobserved ranks as the 30 s default", () => {
    expect(rank([r("a", 1, 900), r("b", 1, 400)]).map((x) => x.provider)).toEqual(["b", "a"]);
    expect(rank([r("a", 1), r("b", 1, 31_000)]).map((x) => x.provider)).toEqual(["a", "b"]);
    expect(rank([r("a", 1), r("b", 1, 29_000)]).map((x) => x.provider)).toEqual(["b", "a"]);
  });
  it("then provider name, then model", () => {
    expect(rank([r("b", 1, 5), r("a", 1, 5)]).map((x) => x.provider)).toEqual(["a", "b"]);
    expect(compareRanked(r("a", 1, 5, "y"), r("a", 1, 5, "x"))).toBeGreaterThan(0);
  });

  it("property: the order is independent of the input order", () => {
    const opt = fc.record({
      provider: fc.constantFrom("p0", "p1", "p2", "p3"),
      model: fc.constantFrom("m0", "m1"),
      cost: fc.constantFrom(0, 1, 1.5, 70.38, 1000),
      latencyEmaMs: fc.option(fc.constantFrom(100, 2000, 30_000), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(opt, { selector: (o) => `${o.provider}/${o.model}`, maxLength: 8 }),
        fc.infiniteStream(fc.nat()),
        (options, noise) => {
          const shuffled = options
            .map((o) => ({ o, k: noise.next().value }))
            .sort((a, b) => a.k - b.k)
            .map((x) => x.o);
          expect(rank(shuffled)).toEqual(rank(options));
        },
      ),
    );
  });
});
