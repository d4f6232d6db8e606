import { describe, expect, it } from "vitest";
import { NO_DEMAND } from "./demand.js";
import { callTimeS, queueOrUnload, queueWaitS, unloadCostS } from "./queue-or-unload.js";

describe("§5 queue wait = remaining(soonest) + queuedBeyondSlots · callTime / slots", () => {
  it("zero when a slot is free", () => {
    expect(queueWaitS({ tickets: 1, slots: 2, oldestElapsedS: 0, callTimeS: 20 })).toBe(0);
    expect(queueWaitS({ tickets: 0, slots: 1, oldestElapsedS: 0, callTimeS: 20 })).toBe(0);
  });
  it("one call 5 s into a 20 s call frees in 15 s", () => {
    expect(queueWaitS({ tickets: 1, slots: 1, oldestElapsedS: 5, callTimeS: 20 })).toBe(15);
  });
  it("five calls there: 15 + 4·20 = 95 s", () => {
    expect(queueWaitS({ tickets: 5, slots: 1, oldestElapsedS: 5, callTimeS: 20 })).toBe(95);
  });
  it("queued calls spread over the slots; an overdue call remains 0", () => {
    // remaining max(0, 20 − 25) = 0; (6 − 2)·20/2 = 40
    expect(queueWaitS({ tickets: 6, slots: 2, oldestElapsedS: 25, callTimeS: 20 })).toBe(40);
  });
  it("call time: the latency EMA in seconds, else 30 s", () => {
    expect(callTimeS(20_000)).toBe(20);
    expect(callTimeS(undefined)).toBe(30);
  });
});

describe("§5 unload cost = F/1024 + Σ(1 + victimF/1024 · expectedReloads)", () => {
  it("32b (27000) idle with recent use 1, unloaded for a 14b (12224): ≈26 s, so the 15 s queue wins", () => {
    // 12224/1024 = 11.9375; 1 + 27000/1024 · 0.5 = 14.18; total ≈ 26.12
    const u = unloadCostS(12224, [{ footprintMiB: 27000, demand: { ...NO_DEMAND, recentUse: 1 } }]);
    expect(u).toBeCloseTo(26.12, 2);
    expect(queueOrUnload(15, u)).toBe("queue");
  });
  it("95 s queue vs an idle unwanted 8b (6000): ≈13 s, so unload", () => {
    const u = unloadCostS(12224, [{ footprintMiB: 6000, demand: undefined }]);
    expect(u).toBeCloseTo(12.94, 2);
    expect(queueOrUnload(95, u)).toBe("unload");
  });
  it("queue wins ties; each option alone wins; neither → wait for memory", () => {
    expect(queueOrUnload(10, 10)).toBe("queue");
    expect(queueOrUnload(undefined, 10)).toBe("unload");
    expect(queueOrUnload(1e9, undefined)).toBe("queue");
    expect(queueOrUnload(undefined, undefined)).toBe("wait-for-memory");
  });
});
