// An unmeasured model's service time (docs/rules/placement.md §5.1): scaled by size from the
// models the fleet has measured, not a flat default; what was measured always comes first.
import { describe, expect, it } from "vitest";
import { provider, RTX_4090_MIB, snapshot } from "../../test/helpers/core-fixtures.js";
import { DEFAULT_CALL_TIME_S } from "./constants.js";
import { type ModelDemand, NO_DEMAND } from "./demand.js";
import { serviceS } from "./expected-time.js";
import { serviceMsPerMiB, sizePriorMs } from "./service-prior.js";
import { indexSnapshot, type PlacementSnapshot } from "./snapshot.js";

const Q8 = "qwen3:8b";
const Q14 = "qwen3:14b";
const VL = "Qwen/Qwen3-14B";
const F8 = 5979;
const F14 = 12224;
const DISK = { [Q8]: F8 / 1.2, [Q14]: F14 / 1.2 };
const demand = (entries: [string, Partial<ModelDemand>][]) =>
  new Map(entries.map(([m, d]) => [m, { ...NO_DEMAND, ...d }]));
const ix = (over: Partial<PlacementSnapshot>) =>
  indexSnapshot(
    snapshot({
      providers: [
        provider("a", {
          totalVramMiB: RTX_4090_MIB,
          availableModelFootprintsMiB: DISK,
          loadedModelFootprintsMiB: { [Q14]: F14 },
        }),
      ],
      ...over,
    }),
    { policy: "time" },
  );

describe("service prior by size", () => {
  it("prices an unmeasured model at the fleet's measured seconds per MiB times its footprint", () => {
    const i = ix({ demand: demand([[Q14, { serviceMs: 10_000 }]]) });
    const v = i.byName.get("a")!;
    expect(serviceS(i, v, Q8)).toBeCloseTo((10 * F8) / F14, 6);
    // The measured model keeps its own measurement.
    expect(serviceS(i, v, Q14)).toBe(10);
  });

  it("weighs each measured model by its size, and ignores models without a footprint", () => {
    const occ = (m: string) => (m === Q8 ? 6000 : m === Q14 ? 12_000 : undefined);
    const rate = serviceMsPerMiB(
      demand([
        [Q8, { serviceMs: 6000 }],
        [Q14, { serviceMs: 18_000 }],
        [VL, { serviceMs: 90_000 }],
      ]),
      occ,
    );
    expect(rate).toBeCloseTo(24_000 / 18_000, 9);
    expect(sizePriorMs(rate, 3000)).toBeCloseTo(4000, 6);
    expect(sizePriorMs(undefined, 3000)).toBeUndefined();
    expect(sizePriorMs(rate, 0)).toBeUndefined();
  });

  it("before anything ran where models load, sizes a fixed engine's measured models by name", () => {
    const vllm = provider("v", { engine: "vllm", loadedModels: [VL], maxParallel: 16 });
    const cardA = provider("a", { totalVramMiB: RTX_4090_MIB, availableModelFootprintsMiB: DISK });
    const only = ix({ providers: [cardA, vllm], demand: demand([[VL, { serviceMs: 12_000 }]]) });
    // Qwen3-14B by name: 14 · 800 + 1024 = 12224 MiB.
    expect(serviceS(only, only.byName.get("a")!, Q8)).toBeCloseTo((12 * F8) / 12_224, 6);
    // Once a model that loads was measured, its rate is the one used.
    const both = ix({
      providers: [cardA, vllm],
      demand: demand([
        [VL, { serviceMs: 12_000 }],
        [Q14, { serviceMs: 10_000 }],
      ]),
    });
    expect(serviceS(both, both.byName.get("a")!, Q8)).toBeCloseTo(
      (10 * F8) / Math.ceil((F14 / 1.2) * 1.2),
      6,
    );
  });

  it("keeps the default while nothing with a size was measured", () => {
    const i = ix({ demand: demand([["mystery", { serviceMs: 12_000 }]]) });
    expect(serviceS(i, i.byName.get("a")!, Q8)).toBe(DEFAULT_CALL_TIME_S);
  });
});
