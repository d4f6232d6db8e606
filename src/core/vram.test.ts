import { describe, expect, it } from "vitest";
import { iso, provider, T0, ticket } from "../../test/helpers/core-fixtures.js";
import { budgetView, claimFits, overlayCurrent, reserveMiB, residentModels, usableMiB } from "./vram.js";

describe("§1 reserve = max(2048, floor(0.12·total)), usable = total − reserve", () => {
  // Hand arithmetic: 0.12·32768 = 3932.16 → 3932, 32768 − 3932 = 28836;
  // 0.12·32605 = 3912.6 → 3912 → 28693; 0.12·24563 = 2947.56 → 2947 → 21616;
  // 0.12·16384 = 1966.08 < 2048 → 14336; 8192 → 6144; 1000 − 2048 < 0 → 0.
  it.each([
    [32768, 28836],
    [32605, 28693],
    [24563, 21616],
    [16384, 14336],
    [8192, 6144],
    [1000, 0],
  ])("usable(%i) = %i", (total, usable) => {
    expect(usableMiB(total)).toBe(usable);
  });

  it("the reserve never drops below 2048", () => {
    expect(reserveMiB(4096)).toBe(2048);
    expect(reserveMiB(100_000)).toBe(12_000);
  });

  it.each([0, -1, Number.NaN])("unknown total %s gives usable 0", (total) => {
    expect(usableMiB(total)).toBe(0);
  });
});

describe("§1 resident: per model the larger of published footprint and overlay, counted once", () => {
  it("takes the larger source per model", () => {
    const p = provider("a", { loadedModelFootprintsMiB: { x: 5000, y: 3000 } });
    const res = residentModels(p, [
      { provider: "a", modelName: "x", modelFootprintMiB: 4000 },
      { provider: "a", modelName: "y", modelFootprintMiB: 3500 },
      { provider: "a", modelName: "z", modelFootprintMiB: 100 },
      { provider: "b", modelName: "w", modelFootprintMiB: 9999 },
    ]);
    expect(Object.fromEntries(res)).toEqual({ x: 5000, y: 3500, z: 100 });
  });

  it("a resident model with an in-flight ticket is not counted twice", () => {
    const p = provider("a", { totalVramMiB: 32768, loadedModelFootprintsMiB: { x: 10_000 } });
    const b = budgetView(p, [ticket("a", "x", { modelFootprintMiB: 10_000, coldLoad: true })], [], T0);
    expect(b.resident + b.inFlight).toBe(10_000);
  });
});

describe("claim budget: resident + in-flight + F ≤ usable + credit", () => {
  const p = provider("a", { totalVramMiB: 32768, loadedModelFootprintsMiB: { big: 20_000 } });
  it("equality fits", () => {
    expect(claimFits(p, [], [], { modelName: "m", modelFootprintMiB: 8836, evicts: {} }, T0)).toBe(true);
    expect(claimFits(p, [], [], { modelName: "m", modelFootprintMiB: 8837, evicts: {} }, T0)).toBe(false);
  });
  it("a planned victim's credit is spendable once", () => {
    const first = ticket("a", "m1", { modelFootprintMiB: 25_000, evicts: { big: 20_000 }, coldLoad: true });
    // m1 already spends big's credit: 20000 + 25000 + 8000 > 28836 + 20000.
    expect(
      claimFits(p, [first], [], { modelName: "m2", modelFootprintMiB: 8000, evicts: { big: 20_000 } }, T0),
    ).toBe(false);
  });
});

describe("residency overlays bridge only until the next probe", () => {
  const overlay = (writtenAt?: number) => ({
    provider: "gpu",
    modelName: "qwen3:32b",
    modelFootprintMiB: 27252,
    ...(writtenAt !== undefined ? { writtenAt } : {}),
  });

  it("counts an overlay written after the last probe", () => {
    const state = provider("gpu", { totalVramMiB: 32605, lastProbedAt: iso(T0) });
    expect(residentModels(state, [overlay(T0 + 5_000)]).get("qwen3:32b")).toBe(27252);
  });

  it("drops an overlay once a later probe does not list the model (unloaded since)", () => {
    const state = provider("gpu", { totalVramMiB: 32605, lastProbedAt: iso(T0 + 60_000) });
    expect(residentModels(state, [overlay(T0)]).has("qwen3:32b")).toBe(false);
    expect(overlayCurrent(state, overlay(T0))).toBe(false);
    // The freed room is room again for a cold claim.
    expect(
      claimFits(
        state,
        [],
        [overlay(T0)],
        { modelName: "qwen3:14b", modelFootprintMiB: 12224, evicts: {} },
        T0,
      ),
    ).toBe(true);
  });

  it("keeps an overlay the later probe confirms, and one within the probe's second", () => {
    const listed = provider("gpu", {
      totalVramMiB: 32605,
      lastProbedAt: iso(T0 + 60_000),
      loadedModels: ["qwen3:32b"],
      loadedModelFootprintsMiB: { "qwen3:32b": 20000 },
    });
    expect(residentModels(listed, [overlay(T0)]).get("qwen3:32b")).toBe(27252);
    const sameSecond = provider("gpu", { totalVramMiB: 32605, lastProbedAt: iso(T0 + 500) });
    expect(overlayCurrent(sameSecond, overlay(T0))).toBe(true);
  });

  it("keeps Kubemoot's overlays (no writtenAt) until they are deleted", () => {
    const state = provider("gpu", { totalVramMiB: 32605, lastProbedAt: iso(T0 + 600_000) });
    expect(residentModels(state, [overlay()]).get("qwen3:32b")).toBe(27252);
  });
});

describe("claimFits counts only the provider's own tickets", () => {
  it("ignores another provider's in-flight load", () => {
    const state = provider("gpu-a", { totalVramMiB: 32605 });
    const elsewhere = ticket("gpu-b", "qwen3:32b", { modelFootprintMiB: 27252, coldLoad: true });
    expect(
      claimFits(state, [elsewhere], [], { modelName: "qwen3:14b", modelFootprintMiB: 12224, evicts: {} }, T0),
    ).toBe(true);
    const here = ticket("gpu-a", "qwen3:32b", { modelFootprintMiB: 27252, coldLoad: true });
    expect(
      claimFits(state, [here], [], { modelName: "qwen3:14b", modelFootprintMiB: 12224, evicts: {} }, T0),
    ).toBe(false);
  });
});
