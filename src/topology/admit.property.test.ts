// Properties of admission over random block → rack → host trees: an admitted assignment never
// exceeds any node's capacity, places exactly the gang, and lies inside one domain at the
// required level; a refusal means no domain at that level had room (checked by brute force).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BLOCK, capacityOf, GPU, node, RACK } from "../../test/topology/fixtures.js";
import { admitGang } from "./admit.js";
import { podsThatFit } from "./capacity.js";
import type { Gang, NodeState } from "./types.js";

const arbNodes: fc.Arbitrary<NodeState[]> = fc
  .array(
    fc.record({
      block: fc.constantFrom("b1", "b2", "b3"),
      rack: fc.integer({ min: 0, max: 2 }),
      gpus: fc.integer({ min: 0, max: 8 }),
      ready: fc.boolean(),
    }),
    { minLength: 1, maxLength: 30 },
  )
  // Rack names carry their block so that a rack never sits under two blocks.
  .map((xs) =>
    xs.map((x, i) => node(`n${i}`, x.block, `${x.block}-r${x.rack}`, x.gpus, { ready: x.ready || i === 0 })),
  );

const arbGang: fc.Arbitrary<Gang> = fc.record({
  key: fc.constant("ml/g"),
  size: fc.integer({ min: 1, max: 20 }),
  requests: fc.integer({ min: 1, max: 4 }).map((g) => ({ [GPU]: g * 1000, pods: 1000 })),
  topology: fc.oneof(
    fc.constantFrom(BLOCK, RACK).map((level) => ({ mode: "required" as const, level })),
    fc.constantFrom(BLOCK, RACK).map((level) => ({ mode: "preferred" as const, level })),
    fc.constant({ mode: "unconstrained" as const }),
  ),
  tolerations: fc.constant([]),
  // Weights held on some nodes: a preference that must never break capacity or locality.
  preferredNodes: fc.subarray(["n0", "n1", "n2", "n3", "n4", "n5"]),
});

describe("admission properties", () => {
  it("never exceeds a node, places the whole gang, stays in one required domain, refuses only when nothing fits", () => {
    fc.assert(
      fc.property(arbNodes, arbGang, (nodes, g) => {
        const cap = capacityOf(nodes);
        const r = admitGang(g, cap);
        const byHost = new Map(nodes.map((n) => [n.name, n]));
        const usable = nodes.filter((n) => n.ready);
        if (r.admitted) {
          let total = 0;
          for (const d of r.assignment.domains) {
            const n = byHost.get(d.values[2]!)!;
            expect(n.ready).toBe(true);
            expect(d.count).toBeGreaterThan(0);
            expect(d.count).toBeLessThanOrEqual(podsThatFit(n.free, g.requests));
            total += d.count;
          }
          expect(total).toBe(g.size);
          if (g.topology.mode === "required") {
            const li = r.assignment.levels.indexOf(g.topology.level);
            expect(new Set(r.assignment.domains.map((d) => d.values.slice(0, li + 1).join("/"))).size).toBe(
              1,
            );
          }
          return;
        }
        // Refused: brute force agrees.
        const fitIn = (key: (n: NodeState) => string) => {
          const sums = new Map<string, number>();
          for (const n of usable) sums.set(key(n), (sums.get(key(n)) ?? 0) + podsThatFit(n.free, g.requests));
          return Math.max(0, ...sums.values());
        };
        const all = usable.reduce((s, n) => s + podsThatFit(n.free, g.requests), 0);
        if (g.topology.mode === "required") {
          expect(
            fitIn((n) => n.labels[g.topology.mode === "required" ? g.topology.level : ""]!),
          ).toBeLessThan(g.size);
        } else {
          expect(all).toBeLessThan(g.size);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("takes the smallest fitting domain at the required level", () => {
    fc.assert(
      fc.property(arbNodes, arbGang, (nodes, g) => {
        if (g.topology.mode !== "required") return;
        const level = g.topology.level;
        const r = admitGang(g, capacityOf(nodes));
        if (!r.admitted) return;
        const sums = new Map<string, number>();
        for (const n of nodes.filter((x) => x.ready)) {
          sums.set(n.labels[level]!, (sums.get(n.labels[level]!) ?? 0) + podsThatFit(n.free, g.requests));
        }
        const li = r.assignment.levels.indexOf(level);
        const chosen = sums.get(r.assignment.domains[0]!.values[li]!)!;
        const smallest = Math.min(...[...sums.values()].filter((s) => s >= g.size));
        expect(chosen).toBe(smallest);
      }),
      { numRuns: 300 },
    );
  });
});
