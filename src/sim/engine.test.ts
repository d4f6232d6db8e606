import { describe, expect, it } from "vitest";
import { POLICIES, runsPlanner, type SimMetrics, simulate, WALL_CLOCK_FIELDS } from "./engine.js";
import { CALL_SHAPE, homelab, lab, type Scenario } from "./scenarios.js";
import { generateWorkload } from "./workload.js";

function twoModelsOneCard(): Scenario {
  const agents = ["a", "b", "c", "d"].map((n, i) => ({
    id: `crew/${n}`,
    crew: "crew",
    role: "analyst" as const,
    candidates: [{ model: i % 2 === 0 ? "left:14b" : "right:14b", score: 80 }],
  }));
  return {
    name: "two-models",
    description: "one card, two models that do not fit together (not even in its total VRAM)",
    gpus: [{ name: "card", vramMiB: 24563 }],
    numParallel: 1,
    contextLength: 8192,
    models: [
      { name: "left:14b", footprintMiB: 13000, serviceMeanS: 10 },
      { name: "right:14b", footprintMiB: 13000, serviceMeanS: 10 },
    ],
    agents,
    crews: [{ name: "crew", agents: agents.map((a) => a.id) }],
    discussionsPerHour: 60,
    arrivalWindowS: 1800,
    ...CALL_SHAPE,
    promptTokensMax: 4000,
  };
}

/** The run as JSON without its wall-clock fields (the decision cost). */
function virtualJson(m: SimMetrics): string {
  const copy: Record<string, unknown> = { ...m };
  for (const k of WALL_CLOCK_FIELDS) delete copy[k];
  return JSON.stringify(copy);
}

describe("simulate", () => {
  it("is deterministic: the same seed gives byte-identical JSON (wall-clock fields aside)", async () => {
    for (const policy of POLICIES) {
      const a = await simulate({ scenario: homelab(), policy, seed: 11, record: true });
      const b = await simulate({ scenario: homelab(), policy, seed: 11, record: true });
      expect(virtualJson(b.metrics)).toBe(virtualJson(a.metrics));
      expect(JSON.stringify(b.calls)).toBe(JSON.stringify(a.calls));
      expect(JSON.stringify(b.unloads)).toBe(JSON.stringify(a.unloads));
      expect(b.events).toBe(a.events);
    }
    const other = await simulate({ scenario: homelab(), policy: "ours", seed: 12 });
    const first = await simulate({ scenario: homelab(), policy: "ours", seed: 11 });
    expect(virtualJson(other.metrics)).not.toBe(virtualJson(first.metrics));
  });

  it("replays identical traffic for every policy and reports every field of the spec", async () => {
    const w1 = generateWorkload(lab(), 3);
    expect(JSON.stringify(generateWorkload(lab(), 3))).toBe(JSON.stringify(w1));
    const results = [];
    for (const policy of POLICIES)
      results.push((await simulate({ scenario: lab(), policy, seed: 3 })).metrics);
    const calls = w1.reduce((n, d) => n + d.turns.reduce((k, t) => k + t.calls.length, 0), 0);
    for (const m of results) {
      expect(m.calls).toBe(calls);
      expect(m.ideal_p95_s).toBe(results[0]!.ideal_p95_s);
      for (const k of [
        "latency_mean_s",
        "latency_p95_s",
        "latency_p99_s",
        "gib_loaded",
        "loads",
        "evictions",
        "gpu_busy_fraction",
        "decision_us_p50",
        "decision_us_p99",
        "ideal_p95_s",
      ] as const) {
        expect(Number.isFinite(m[k]), `${m.policy} ${k}`).toBe(true);
      }
      expect(Object.keys(m.stand_asides).sort()).toEqual([
        "gpu-busy",
        "model-too-large",
        "model-unknown",
        "prompt-too-large",
        "provider-unavailable",
      ]);
      expect(
        m.completed + m.dropped + m.unfinished + Object.values(m.stand_asides).reduce((a, b) => a + b, 0),
      ).toBe(calls);
      // A call can never beat its own service time plus nothing: latency ≥ ideal on average.
      expect(m.latency_mean_s).toBeGreaterThan(0);
      expect(m.gpu_busy_fraction).toBeGreaterThan(0);
      expect(m.gpu_busy_fraction).toBeLessThanOrEqual(1);
    }
  });

  it("baselines send the preferred model only and never refuse a model that fits", async () => {
    for (const policy of POLICIES.filter((p) => !runsPlanner(p))) {
      const r = await simulate({ scenario: homelab(), policy, seed: 2, record: true });
      expect(r.metrics.stand_asides).toEqual({
        "gpu-busy": 0,
        "model-too-large": 0,
        "prompt-too-large": 0,
        "provider-unavailable": 0,
        "model-unknown": 0,
      });
      for (const c of r.calls!) if (c.outcome === "done") expect(c.model).toBe(c.preferred);
    }
  });

  it("the static binder partitions the homelab: 32b on the 5090, 14b and 8b on the 4090", async () => {
    const r = await simulate({ scenario: homelab(), policy: "static", seed: 1, record: true });
    const where = new Map<string, Set<string>>();
    for (const c of r.calls!) {
      if (c.outcome !== "done") continue;
      const s = where.get(c.model) ?? new Set();
      s.add(c.provider);
      where.set(c.model, s);
    }
    expect([...where.get("qwen3:32b")!]).toEqual(["rtx-5090"]);
    expect([...where.get("qwen3:14b")!]).toEqual(["rtx-4090"]);
    expect([...where.get("qwen3:8b")!]).toEqual(["rtx-4090"]);
  });

  it("waits for memory, retries on state changes, and stands aside at the wait limit", async () => {
    // One card that holds one of two models at a time: a call for the other waits for memory
    // while the first is busy (live work is never evicted), then unloads it once it is idle.
    const patient = await simulate({ scenario: twoModelsOneCard(), policy: "ours", seed: 1, record: true });
    const waited = patient.decisions!.filter((d) => d.kind === "wait-for-memory");
    expect(waited.length).toBeGreaterThan(0);
    const waiting = new Set(waited.map((d) => d.callId));
    const placedAfterWaiting = patient.decisions!.filter(
      (d) => waiting.has(d.callId) && d.kind === "claim" && Object.keys(d.evicts).length > 0,
    );
    expect(placedAfterWaiting.length).toBeGreaterThan(0);
    // Every stand-aside is gpu-busy and came only after the full 90 s wait.
    const firstTry = new Map<string, number>();
    for (const d of patient.decisions!) if (!firstTry.has(d.callId)) firstTry.set(d.callId, d.atMs);
    const lastTry = new Map<string, number>();
    for (const d of patient.decisions!) lastTry.set(d.callId, d.atMs);
    const stood = patient.calls!.filter((c) => c.outcome === "stand-aside");
    for (const c of stood) {
      expect(c.standAside).toBe("gpu-busy");
      expect(lastTry.get(c.id)! - firstTry.get(c.id)!).toBeGreaterThanOrEqual(90_000);
    }
    // The rest of a turn that stood aside is never called.
    expect(patient.metrics.dropped).toBeGreaterThanOrEqual(0);
    expect(patient.metrics.completed + patient.metrics.dropped + stood.length).toBe(patient.metrics.calls);

    const hasty = await simulate({ scenario: twoModelsOneCard(), policy: "ours", seed: 1, waitLimitS: 1 });
    expect(hasty.metrics.stand_asides["gpu-busy"]).toBeGreaterThan(patient.metrics.stand_asides["gpu-busy"]);
    expect(hasty.metrics.dropped).toBeGreaterThan(0);
  });

  it("refuses a model no card can hold as model-too-large, for ours and the baselines alike", async () => {
    const sc = twoModelsOneCard();
    sc.models.push({ name: "huge:70b", footprintMiB: 50_000, serviceMeanS: 30 });
    sc.agents[0]!.candidates = [{ model: "huge:70b", score: 90 }];
    for (const policy of ["ours", "round-robin"] as const) {
      const r = await simulate({ scenario: sc, policy, seed: 1 });
      expect(r.metrics.stand_asides["model-too-large"], policy).toBeGreaterThan(0);
    }
  });
});
