import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { provider, snapshot, ticket } from "../../test/helpers/core-fixtures.js";
import { type ModelDemand, NO_DEMAND } from "./demand.js";
import { indexSnapshot } from "./snapshot.js";
import { chooseVictims, idleResidents, type VictimCandidate } from "./victims.js";

const d = (over: Partial<ModelDemand>): ModelDemand => ({ ...NO_DEMAND, ...over });
const v = (model: string, footprintMiB: number, demand?: ModelDemand): VictimCandidate => ({
  model,
  footprintMiB,
  demand,
});
const names = (vs: VictimCandidate[] | undefined) => vs?.map((x) => x.model);

describe("§5 victims: the fewest that make room", () => {
  it("one big victim beats two small ones, even if less needed", () => {
    expect(
      names(chooseVictims([v("s1", 4000), v("s2", 4000), v("big", 9000, d({ recentUse: 5 }))], 8000)),
    ).toEqual(["big"]);
  });
  it("among equally few, least needed first", () => {
    expect(
      names(chooseVictims([v("a", 9000, d({ intents: 1 })), v("b", 9000, d({ recentUse: 3 }))], 8000)),
    ).toEqual(["b"]);
  });
  it("a smaller but less needed victim is chosen when it alone makes room", () => {
    expect(names(chooseVictims([v("large", 20000, d({ recentUse: 1 })), v("small", 8000)], 8000))).toEqual([
      "small",
    ]);
  });
  it("first without waited-for models; only if that fails with them", () => {
    const waited = v("w", 9000, d({ waiters: 1 }));
    expect(names(chooseVictims([waited, v("a", 5000), v("b", 5000)], 8000))).toEqual(["a", "b"]);
    expect(names(chooseVictims([waited, v("a", 5000)], 8000))).toEqual(["w"]);
  });
  it("no need → no victim; impossible → undefined", () => {
    expect(chooseVictims([v("a", 1)], 0)).toEqual([]);
    expect(chooseVictims([v("a", 1)], 2)).toBeUndefined();
  });
  it("at most 10 considered: the 11th least needed is never picked", () => {
    const pool = Array.from({ length: 10 }, (_, i) => v(`m${i}`, 100, d({ recentUse: i })));
    const spare = v("m99", 10_000, d({ recentUse: 99 }));
    expect(chooseVictims([...pool, spare], 5_000)).toBeUndefined();
    expect(chooseVictims([...pool, spare], 5_000, 11)?.map((x) => x.model)).toEqual(["m99"]);
  });

  it("property: the choice makes room with the fewest victims among those considered", () => {
    const cand = fc.record({
      footprintMiB: fc.integer({ min: 0, max: 30_000 }),
      waiters: fc.integer({ min: 0, max: 1 }),
      use: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(fc.array(cand, { maxLength: 8 }), fc.integer({ min: -10, max: 60_000 }), (cs, need) => {
        const pool = cs.map((c, i) =>
          v(`m${i}`, c.footprintMiB, d({ waiters: c.waiters, recentUse: c.use })),
        );
        const chosen = chooseVictims(pool, need);
        // Brute force over every subset (≤ 8 < 10, so all are considered): the fewest that make
        // room, overall and without waited-for models.
        let fewest = Number.POSITIVE_INFINITY;
        let fewestUnwaited = Number.POSITIVE_INFINITY;
        for (let mask = 0; mask < 1 << pool.length; mask++) {
          let sum = 0;
          let n = 0;
          let waited = false;
          for (let i = 0; i < pool.length; i++) {
            if (mask & (1 << i)) {
              sum += pool[i]!.footprintMiB;
              n++;
              if ((pool[i]!.demand?.waiters ?? 0) > 0) waited = true;
            }
          }
          if (sum < need) continue;
          fewest = Math.min(fewest, n);
          if (!waited) fewestUnwaited = Math.min(fewestUnwaited, n);
        }
        if (fewest === Number.POSITIVE_INFINITY) {
          expect(chosen).toBeUndefined();
          return;
        }
        expect(chosen).toBeDefined();
        expect(new Set(chosen!.map((x) => x.model)).size).toBe(chosen!.length);
        expect(chosen!.reduce((s, x) => s + x.footprintMiB, 0)).toBeGreaterThanOrEqual(need);
        const usesWaited = chosen!.some((x) => (x.demand?.waiters ?? 0) > 0);
        if (fewestUnwaited < Number.POSITIVE_INFINITY) {
          expect(usesWaited).toBe(false);
          expect(chosen!.length).toBe(fewestUnwaited);
        } else {
          expect(chosen!.length).toBe(fewest);
        }
      }),
    );
  });
});

describe("§5 idle residents: no in-flight ticket, not planned by another ticket, not the requested model", () => {
  it("filters each kind", () => {
    const ix = indexSnapshot(
      snapshot({
        providers: [
          provider("a", {
            totalVramMiB: 81920,
            loadedModelFootprintsMiB: { busy: 1, planned: 2, req: 3, idle: 4 },
          }),
        ],
        tickets: [ticket("a", "busy"), ticket("a", "other", { evicts: { planned: 2 } })],
      }),
    );
    expect(idleResidents(ix.providers[0]!, "req", new Map()).map((c) => c.model)).toEqual(["idle"]);
  });
});
