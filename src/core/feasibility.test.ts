import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  iso,
  provider,
  RTX_4090_MIB,
  RTX_5090_MIB,
  residency,
  snapshot,
  T0,
  ticket,
} from "../../test/helpers/core-fixtures.js";
import { CLOSED_CIRCUIT, recordFailure } from "./circuit-breaker.js";
import { feasibility, vramFeasibility } from "./feasibility.js";
import type { Occupancy } from "./occupancy.js";
import { indexSnapshot, type ProviderHealth } from "./snapshot.js";
import { residentModels } from "./vram.js";

const occ = (mib: number): Occupancy => ({ known: true, mib, source: "observed" });
const UNKNOWN: Occupancy = { known: false };

function view(...args: Parameters<typeof snapshot>) {
  return indexSnapshot(snapshot(...args)).providers[0]!;
}

describe("§3 cold: total known, occ ≤ usable, occ + committed ≤ usable", () => {
  it("qwen3:32b (27252) fits only the 5090 (4090 usable is 21616)", () => {
    const p4090 = view({ providers: [provider("4090", { totalVramMiB: RTX_4090_MIB })] });
    const p5090 = view({ providers: [provider("5090", { totalVramMiB: RTX_5090_MIB })] });
    expect(vramFeasibility(p4090, "qwen3:32b", occ(27252))).toEqual({
      feasible: false,
      reason: "exceeds-usable",
    });
    expect(vramFeasibility(p5090, "qwen3:32b", occ(27252))).toMatchObject({ feasible: true, warm: false });
  });
  it("equality fits: occ + resident = usable", () => {
    // usable(32768) = 28836; 20000 resident + 8836 = 28836
    const v = view({
      providers: [provider("a", { totalVramMiB: 32768, loadedModelFootprintsMiB: { x: 20000 } })],
    });
    expect(vramFeasibility(v, "m", occ(8836)).feasible).toBe(true);
    expect(vramFeasibility(v, "m", occ(8837))).toEqual({ feasible: false, reason: "no-room" });
  });
  it("the residency overlay counts as resident", () => {
    const v = view({
      providers: [provider("5090", { totalVramMiB: RTX_5090_MIB })],
      residencies: [residency("5090", "qwen3:32b", 27252)],
    });
    expect(vramFeasibility(v, "qwen3:8b", occ(5979))).toEqual({ feasible: false, reason: "no-room" });
  });
  it("an in-flight cold load takes room like a resident (counted once per model)", () => {
    // usable 28836; loading x 10000 twice (one model) → 18836 left
    const providers = [provider("a", { totalVramMiB: 32768 })];
    const tickets = [
      ticket("a", "x", { modelFootprintMiB: 10000, coldLoad: true }),
      ticket("a", "x", { modelFootprintMiB: 10000 }),
    ];
    const v = view({ providers, tickets });
    expect(vramFeasibility(v, "m", occ(18836)).feasible).toBe(true);
    expect(vramFeasibility(v, "m", occ(18837)).feasible).toBe(false);
  });
  it("a victim another ticket plans frees room only for that ticket's own load", () => {
    // resident big 20000 (planned victim of a load of y 15000): committed = 20000 + 15000 − 20000 = 15000
    const providers = [provider("a", { totalVramMiB: 32768, loadedModelFootprintsMiB: { big: 20000 } })];
    const tickets = [ticket("a", "y", { modelFootprintMiB: 15000, evicts: { big: 20000 } })];
    const v = view({ providers, tickets });
    expect(vramFeasibility(v, "m", occ(13836)).feasible).toBe(true);
    expect(vramFeasibility(v, "m", occ(13837)).feasible).toBe(false);
  });
  it("an expired ticket holds nothing", () => {
    const providers = [provider("a", { totalVramMiB: 32768 })];
    const tickets = [ticket("a", "x", { modelFootprintMiB: 28000, expiresAt: T0 })];
    expect(vramFeasibility(view({ providers, tickets }), "m", occ(28836)).feasible).toBe(true);
  });
  it("unknown total or unknown occupancy never places a cold load", () => {
    expect(vramFeasibility(view({ providers: [provider("a")] }), "m", occ(1))).toEqual({
      feasible: false,
      reason: "unknown-total",
    });
    expect(
      vramFeasibility(view({ providers: [provider("a", { totalVramMiB: 32768 })] }), "m", UNKNOWN),
    ).toEqual({
      feasible: false,
      reason: "unknown-occupancy",
    });
  });
});

describe("§3 warm: resident or loading is feasible whatever its VRAM or slots", () => {
  it("resident on a full, unknown-total card with a long queue", () => {
    const providers = [provider("a", { loadedModelFootprintsMiB: { m: 99_999 } })];
    const tickets = [1, 2, 3, 4].map(() => ticket("a", "m"));
    expect(vramFeasibility(view({ providers, tickets }), "m", UNKNOWN)).toMatchObject({
      feasible: true,
      warm: true,
    });
  });
  it("being loaded by a live ticket", () => {
    const providers = [provider("a", { totalVramMiB: 8192 })];
    const tickets = [ticket("a", "m", { modelFootprintMiB: 50_000, coldLoad: true })];
    expect(vramFeasibility(view({ providers, tickets }), "m", occ(50_000))).toMatchObject({
      feasible: true,
      warm: true,
      loading: true,
    });
  });
  it("a copy another ticket plans to unload is not warm", () => {
    const providers = [provider("a", { totalVramMiB: 32768, loadedModelFootprintsMiB: { m: 5000 } })];
    const tickets = [ticket("a", "x", { modelFootprintMiB: 20000, evicts: { m: 5000 } })];
    expect(vramFeasibility(view({ providers, tickets }), "m", occ(5000))).toEqual({
      feasible: false,
      reason: "planned-unload",
    });
  });
  it.each([
    ["not ready", { ready: false }, undefined, "not-ready"],
    ["stale", { lastProbedAt: iso(T0 - 301_000) }, undefined, "stale"],
    ["circuit open", {}, [T0 - 3, T0 - 2, T0 - 1], "circuit-open"],
  ] as const)("skipped when %s", (_l, over, failures, reason) => {
    let circuit = CLOSED_CIRCUIT;
    for (const t of failures ?? []) circuit = recordFailure(circuit, t);
    const health = new Map<string, ProviderHealth>([["a", { circuit }]]);
    const v = view({ providers: [provider("a", { loadedModelFootprintsMiB: { m: 1 }, ...over })], health });
    expect(vramFeasibility(v, "m", occ(1))).toEqual({ feasible: false, reason });
  });

  it("property: a warm copy is feasible whenever the provider is ready, fresh and its circuit closed", () => {
    const models = ["m0", "m1", "m2", "m3"];
    fc.assert(
      fc.property(
        fc.constantFrom(0, 8192, 24563, 32605),
        fc.dictionary(fc.constantFrom(...models), fc.integer({ min: 0, max: 40_000 })),
        fc.array(
          fc.record({
            model: fc.constantFrom(...models),
            mib: fc.integer({ min: 0, max: 40_000 }),
            cold: fc.option(fc.boolean(), { nil: undefined }),
            evict: fc.option(fc.constantFrom(...models), { nil: undefined }),
            expiresIn: fc.integer({ min: -1000, max: 100_000 }),
          }),
          { maxLength: 6 },
        ),
        fc.integer({ min: 1, max: 4 }),
        (total, loaded, ts, maxParallel) => {
          const state = provider("a", { totalVramMiB: total, loadedModelFootprintsMiB: loaded, maxParallel });
          const tickets = ts.map((t) =>
            ticket("a", t.model, {
              modelFootprintMiB: t.mib,
              coldLoad: t.cold,
              evicts: t.evict === undefined ? {} : { [t.evict]: 1 },
              expiresAt: T0 + t.expiresIn,
            }),
          );
          const v = view({ providers: [state], tickets });
          const resident = residentModels(state, []);
          const live = tickets.filter((t) => t.expiresAt! > T0);
          for (const m of models) {
            const planned = live.some((t) => m in t.evicts);
            const loading = !resident.has(m) && live.some((t) => t.modelName === m && t.coldLoad !== false);
            const warm = (resident.has(m) && !planned) || loading;
            if (warm) expect(feasibility(v, m, UNKNOWN, 0)).toMatchObject({ feasible: true, warm: true });
          }
        },
      ),
    );
  });
});

describe("§3 both filters for the same pair", () => {
  it("a warm copy whose context is too small is infeasible for that prompt; equality fits", () => {
    const v = view({
      providers: [
        provider("a", { loadedModelFootprintsMiB: { m: 1 }, loadedModelContextLengths: { m: 4096 } }),
      ],
    });
    expect(feasibility(v, "m", occ(1), 4096).feasible).toBe(true);
    expect(feasibility(v, "m", occ(1), 4097)).toEqual({ feasible: false, reason: "context-too-small" });
  });
});
