import { describe, expect, it } from "vitest";
import {
  aggregateDemand,
  compareLeastNeeded,
  expectedReloads,
  type ModelDemand,
  NO_DEMAND,
} from "./demand.js";
import type { DemandEntry } from "./shapes.js";

const NOW = 10_000_000;
const later = NOW + 60_000;

describe("§8 demand aggregation", () => {
  const entries: DemandEntry[] = [
    { kind: "wait", model: "m", agent: "ns/a", expiresAt: later },
    { kind: "wait", model: "m", agent: "ns/b", expiresAt: later },
    { kind: "wait", model: "m", agent: "ns/c", expiresAt: NOW }, // expired (expiresAt ≤ now)
    { kind: "intent", model: "m", agent: "ns/a", thread: "t1", expiresAt: later },
    { kind: "intent", model: "n", agent: "ns/a", thread: "t1", expiresAt: NOW - 1 }, // expired
    {
      kind: "use",
      model: "m",
      agent: "ns/a",
      rate: 4,
      updatedAt: NOW - 600_000,
      lastUsedAt: NOW - 5,
      expiresAt: later,
    },
    { kind: "sel", rate: 2, updatedAt: NOW, expiresAt: later, models: ["m", "n", "m"] },
    { kind: "sel", rate: 1, updatedAt: NOW - 1_200_000, expiresAt: later, models: ["n"] },
  ];
  const d = aggregateDemand(entries, NOW);

  it("counts live waiters and intents per model, skipping expired entries", () => {
    expect(d.get("m")?.waiters).toBe(2);
    expect(d.get("m")?.intents).toBe(1);
    expect(d.get("n")?.intents ?? 0).toBe(0);
  });
  it("recent use is the decayed use rate (4 after one half-life → 2)", () => {
    expect(d.get("m")?.recentUse).toBeCloseTo(2, 10);
    expect(d.get("m")?.lastUsedAtMs).toBe(NOW - 5);
  });
  it("per-namespace use entries of one model add their rates; service time is the newest's", () => {
    const use = (agent: string, rate: number, updatedAt: number, serviceMs: number): DemandEntry => ({
      kind: "use",
      model: "u",
      agent,
      rate,
      updatedAt,
      lastUsedAt: updatedAt,
      expiresAt: later,
      serviceMs,
    });
    // The newest entry sits in the middle, so neither first nor last in order wins by position.
    const u = aggregateDemand(
      [use("a/x", 1, NOW - 2, 300), use("b/y", 2, NOW, 900), use("c/z", 3, NOW - 1, 500)],
      NOW,
    );
    expect(u.get("u")?.recentUse).toBeCloseTo(6, 3);
    expect(u.get("u")?.serviceMs).toBe(900);
    expect(u.get("u")?.lastUsedAtMs).toBe(NOW);
  });
  it("predicted = Σ decayed selection rates of agents naming the model (each entry once)", () => {
    expect(d.get("m")?.predicted).toBeCloseTo(2, 10);
    // 2 + 1·0.25 (two half-lives)
    expect(d.get("n")?.predicted).toBeCloseTo(2.25, 10);
  });
  it("expectedReloads = waiters + intents + 0.5·(recentUse + predicted)", () => {
    // 2 + 1 + 0.5·(2 + 2) = 5
    expect(expectedReloads(d.get("m"))).toBeCloseTo(5, 10);
    expect(expectedReloads(undefined)).toBe(0);
  });
});

describe("§5 least needed first", () => {
  const mk = (over: Partial<ModelDemand>): ModelDemand => ({ ...NO_DEMAND, ...over });
  const cases: [string, ModelDemand, string, ModelDemand][] = [
    ["fewer waiters", mk({ waiters: 0, intents: 9 }), "b", mk({ waiters: 1 })],
    ["then fewer intents", mk({ intents: 0, recentUse: 9 }), "b", mk({ intents: 1 })],
    ["then lower use + prediction", mk({ recentUse: 0.5, predicted: 0.4 }), "b", mk({ recentUse: 1 })],
    ["then least recently used", mk({ lastUsedAtMs: 1 }), "b", mk({ lastUsedAtMs: 2 })],
    ["then name", mk({}), "b", mk({})],
  ];
  it.each(cases)("%s", (_label, da, b, db) => {
    expect(compareLeastNeeded("a", da, b, db)).toBeLessThan(0);
    expect(compareLeastNeeded(b, db, "a", da)).toBeGreaterThan(0);
  });
});
