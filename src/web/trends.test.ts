// The trends panel's series (docs/web-view.md "Trends"): buckets of one step closed by time,
// weighted call rates and p95 wait, loads and unloads seen in the fleet's resident models, used
// VRAM per card, refusals by reason; memory bounded by the window however long it runs.
import { describe, expect, it } from "vitest";
import { T0 } from "../../test/helpers/core-fixtures.js";
import { TREND_STEP_MS, TREND_WINDOW_MS, Trends, weightedP95 } from "./trends.js";
import type { DecisionRecord, ProviderCard, VramSegment } from "./view-types.js";

const STEP = 5000;
const WINDOW = 60_000;

function rec(kind: DecisionRecord["kind"], over: Partial<DecisionRecord> = {}): DecisionRecord {
  return {
    v: 1,
    id: "c",
    at: T0,
    kind,
    agent: "team-a/planner",
    crew: "team-a",
    instance: "i",
    model: "qwen3:14b",
    waitMs: 0,
    policy: "time",
    weight: 1,
    ...over,
  };
}

/** A card with these resident models (1000 MiB each) and loads in flight (500 MiB each). */
function card(name: string, resident: string[], loading: string[] = []): ProviderCard {
  const vram: VramSegment[] = [
    ...resident.map((model) => ({ kind: "resident" as const, model, mib: 1000 })),
    ...loading.map((model) => ({ kind: "loading" as const, model, mib: 500 })),
    { kind: "reserve", mib: 2048 },
    { kind: "free", mib: 9999 },
  ];
  return {
    name,
    engine: "ollama",
    ready: true,
    suspect: false,
    lastProbedAt: "",
    totalMiB: 0,
    vram,
    loadedModels: resident,
    slots: { max: 1, running: 0, queued: 0 },
  };
}

describe("weightedP95", () => {
  it("is the smallest value with 95% of the weight at or below it", () => {
    expect(weightedP95([])).toBeNull();
    expect(weightedP95([[4, 1]])).toBe(4);
    const hundred = Array.from({ length: 100 }, (_, i) => [100 - i, 1] as [number, number]);
    expect(weightedP95(hundred)).toBe(95);
    expect(
      weightedP95([
        [10, 1],
        [1, 99],
      ]),
    ).toBe(1);
    expect(
      weightedP95([
        [10, 6],
        [1, 94],
      ]),
    ).toBe(10);
    expect(
      weightedP95([
        [3, 1],
        [2, 1],
        [1, 18],
      ]),
    ).toBe(2);
  });
});

describe("Trends", () => {
  it("closes buckets at step boundaries, with weighted calls per second and p95 wait", () => {
    expect(TREND_STEP_MS).toBe(5000);
    expect(TREND_WINDOW_MS).toBe(3_600_000);
    const t = new Trends(T0 + 1234, STEP, WINDOW);
    t.record(rec("placed", { weight: 3, waitMs: 2000 }));
    t.record(rec("placed", { weight: 2, waitMs: 500 }));
    t.record(rec("refused", { reason: "gpu-busy", weight: 7, waitMs: 60_000 }));
    t.record(rec("released", { weight: 4, waitMs: 60_000 }));
    expect(t.tick(T0 + STEP - 1)).toEqual([]);
    const [p, ...rest] = t.tick(T0 + STEP);
    expect(rest).toEqual([]);
    expect(p).toEqual({ t: T0, callsPerS: 1, waitP95S: 2, loadsPerMin: 0, unloadsPerMin: 0, vramMiB: {} });
    // An empty bucket: no calls, no wait.
    expect(t.tick(T0 + 2 * STEP)).toEqual([
      { t: T0 + STEP, callsPerS: 0, waitP95S: null, loadsPerMin: 0, unloadsPerMin: 0, vramMiB: {} },
    ]);
    expect(t.series().points.map((x) => x.t)).toEqual([T0, T0 + STEP]);
    expect(t.series().stepMs).toBe(STEP);
  });

  it("closes every bucket a late tick passed, oldest first", () => {
    const t = new Trends(T0, STEP, WINDOW);
    t.record(rec("placed", { weight: 1 }));
    const closed = t.tick(T0 + 3 * STEP + 10);
    expect(closed.map((p) => p.t)).toEqual([T0, T0 + STEP, T0 + 2 * STEP]);
    expect(closed.map((p) => p.callsPerS)).toEqual([0.2, 0, 0]);
  });

  it("counts loads and unloads from resident-set changes, the first sight being a baseline", () => {
    const t = new Trends(T0, STEP, WINDOW);
    t.fleet([card("rtx-4090", ["qwen3:8b", "qwen3:14b"])]);
    const [first] = t.tick(T0 + STEP);
    expect(first).toMatchObject({ loadsPerMin: 0, unloadsPerMin: 0, vramMiB: { "rtx-4090": 2000 } });
    // qwen3:14b unloaded, gemma3:4b loaded on the 4090; a new card seen for the first time.
    t.fleet([card("rtx-4090", ["qwen3:8b", "gemma3:4b"], ["qwen3:32b"]), card("rtx-5090", ["qwen3:32b"])]);
    t.fleet([card("rtx-4090", ["qwen3:8b", "gemma3:4b"], ["qwen3:32b"]), card("rtx-5090", ["qwen3:32b"])]);
    const [second] = t.tick(T0 + 2 * STEP);
    // 1 load and 1 unload in a 5-second bucket: 12 a minute each.
    expect(second).toMatchObject({
      loadsPerMin: 12,
      unloadsPerMin: 12,
      vramMiB: { "rtx-4090": 2500, "rtx-5090": 1000 },
    });
    t.fleet([card("rtx-4090", ["qwen3:8b", "gemma3:4b", "qwen3:32b"]), card("rtx-5090", [])]);
    const [third] = t.tick(T0 + 3 * STEP);
    expect(third).toMatchObject({ loadsPerMin: 12, unloadsPerMin: 12 });
  });

  it("filters the series to a shorter window", () => {
    const t = new Trends(T0, STEP, WINDOW);
    t.tick(T0 + 10 * STEP);
    expect(t.series().points).toHaveLength(10);
    expect(t.series(4 * STEP).points.map((p) => p.t)).toEqual([6, 7, 8, 9].map((i) => T0 + i * STEP));
    expect(t.series(0).points).toEqual([]);
  });

  it("keeps at most window / step points however long it runs", () => {
    const t = new Trends(T0, STEP, WINDOW);
    const keep = WINDOW / STEP;
    let now = T0;
    for (let i = 0; i < 1000; i++) {
      now += STEP;
      t.record(rec("placed", { weight: i }));
      t.record(rec("refused", { reason: "gpu-busy", weight: 1 }));
      t.tick(now);
      expect(t.series().points.length).toBeLessThanOrEqual(keep);
    }
    const points = t.series().points;
    expect(points).toHaveLength(keep);
    expect(points.at(-1)).toMatchObject({ t: now - STEP, callsPerS: 999 / 5 });
    // Only the window's buckets are kept: one refusal each.
    expect(t.refusals().get("gpu-busy")).toBe(keep);
    // After a pause longer than the window, it starts again at the current step.
    now += 5 * WINDOW + 1234;
    expect(t.tick(now).map((p) => p.t)).toEqual([now - 5 * WINDOW - 1234]);
    expect(t.series().points.length).toBeLessThanOrEqual(keep);
    expect(t.tick(now + STEP - 1234)).toHaveLength(1);
  });

  it("aggregates refusals by reason with weights, over the window only", () => {
    const t = new Trends(T0, STEP, WINDOW);
    t.record(rec("refused", { reason: "gpu-busy", weight: 3 }));
    t.record(rec("refused", { reason: "model-too-large", weight: 2 }));
    t.tick(T0 + STEP);
    t.record(rec("refused", { reason: "gpu-busy", weight: 1 }));
    t.record(rec("refused", { weight: 9 }));
    t.record(rec("placed", { reason: "gpu-busy", weight: 5 }));
    expect(t.refusals()).toEqual(
      new Map([
        ["gpu-busy", 4],
        ["model-too-large", 2],
      ]),
    );
    t.tick(T0 + 2 * STEP);
    expect(t.refusals().get("gpu-busy")).toBe(4);
    // Once the first bucket has left the window, its refusals are gone.
    t.tick(T0 + WINDOW + STEP);
    expect(t.refusals()).toEqual(new Map([["gpu-busy", 1]]));
    t.tick(T0 + WINDOW + 2 * STEP);
    expect(t.refusals()).toEqual(new Map());
  });
});
