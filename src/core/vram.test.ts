import { describe, expect, it } from "vitest";
import { provider, T0, ticket } from "./test-fixtures.js";
import { budgetView, claimFits, reserveMiB, residentModels, usableMiB } from "./vram.js";

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
