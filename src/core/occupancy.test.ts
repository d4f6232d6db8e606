import { describe, expect, it } from "vitest";
import { provider } from "../../test/helpers/core-fixtures.js";
import { nameEstimateMiB, occupancyFrom, paramsFromName, resolveOccupancy } from "./occupancy.js";

describe("§2 name estimate: ceil(largest <number>b) × 800 + 1024", () => {
  it.each([
    ["qwen3:8b", 7424], // 8·800 + 1024
    ["qwen3:32b", 26624], // 32·800 + 1024
    ["qwen2.5:0.5b", 1824], // ceil(0.5) = 1
    ["deepseek-r1:1.5b", 2624], // ceil(1.5) = 2
    ["qwen3-coder:30b-a3b", 25024], // largest of 30 and 3
    ["LLAMA3.1:70B-Instruct", 57024], // lowercased
  ])("%s → %i MiB", (name, mib) => {
    expect(nameEstimateMiB(name)).toBe(mib);
  });

  it.each(["nomic-embed-text", "bge-m3", "model:4bit", ""])("%j has no parameter count", (name) => {
    expect(paramsFromName(name)).toBeUndefined();
    expect(nameEstimateMiB(name)).toBeUndefined();
  });
});

describe("§2 occupancy order: observed → declared → on-disk × 1.2 → name → unknown", () => {
  it("observed wins and takes the largest over providers", () => {
    const ps = [
      provider("a", { loadedModelFootprintsMiB: { "qwen3:8b": 5979 } }),
      provider("b", { loadedModelFootprintsMiB: { "qwen3:8b": 6100 } }),
      provider("c", { availableModelFootprintsMiB: { "qwen3:8b": 4863 } }),
    ];
    expect(resolveOccupancy("qwen3:8b", ps, 9000)).toEqual({ known: true, mib: 6100, source: "observed" });
  });
  it("declared beats on-disk and the name", () => {
    const ps = [provider("a", { availableModelFootprintsMiB: { "qwen3:8b": 4863 } })];
    expect(resolveOccupancy("qwen3:8b", ps, 9000)).toEqual({ known: true, mib: 9000, source: "declared" });
  });
  it("on-disk × 1.2, rounded up", () => {
    // 4863 · 1.2 = 5835.6 → 5836
    const ps = [provider("a", { availableModelFootprintsMiB: { "qwen3:8b": 4863 } })];
    expect(resolveOccupancy("qwen3:8b", ps)).toEqual({ known: true, mib: 5836, source: "on-disk" });
  });
  it("falls back to the name, then unknown", () => {
    expect(resolveOccupancy("qwen3:8b", [])).toEqual({ known: true, mib: 7424, source: "name-estimate" });
    expect(resolveOccupancy("mystery", [])).toEqual({ known: false });
  });
  it("zero and negative figures count as absent", () => {
    expect(occupancyFrom("x:2b", 0, -5, 0)).toEqual({ known: true, mib: 2624, source: "name-estimate" });
  });
});
