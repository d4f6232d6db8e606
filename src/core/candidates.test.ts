import { describe, expect, it } from "vitest";
import { effectiveTolerance, inTolerance, parseCandidates } from "./candidates.js";

describe("candidate list parsing never throws", () => {
  it("parses the env form, keeping order", () => {
    expect(parseCandidates('[{"model":"qwen3:32b","score":70},{"model":"qwen3:14b","score":65}]')).toEqual({
      candidates: [
        { model: "qwen3:32b", score: 70 },
        { model: "qwen3:14b", score: 65 },
      ],
    });
  });
  it.each([
    [undefined, /no candidate list/],
    [null, /no candidate list/],
    ["", /blank/],
    ["   ", /blank/],
    ["[{", /not JSON/],
    ['{"model":"x","score":1}', /not a JSON array/],
    ["[]", /empty/],
  ])("%j → empty with a reason", (raw, reason) => {
    const r = parseCandidates(raw);
    expect(r.candidates).toEqual([]);
    expect(r.reason).toMatch(reason);
  });
  it("keeps a declared vramMib, and drops one that is not a positive number (not the item)", () => {
    const r = parseCandidates(
      '[{"model":"a","score":1,"vramMib":21000},{"model":"b","score":1,"vramMib":0},{"model":"c","score":1,"vramMib":"9"}]',
    );
    expect(r).toEqual({
      candidates: [
        { model: "a", score: 1, vramMib: 21000 },
        { model: "b", score: 1 },
        { model: "c", score: 1 },
      ],
    });
  });
  it("skips invalid and duplicate items and says so", () => {
    const r = parseCandidates(
      '[{"model":"a","score":1},{"model":"","score":2},{"score":3},{"model":"b","score":"x"},null,{"model":"a","score":9}]',
    );
    expect(r.candidates).toEqual([{ model: "a", score: 1 }]);
    expect(r.reason).toMatch(/4 invalid.*1 duplicate/);
  });
});

describe("§5 in-tolerance: score ≥ preferred − tolerance, highest first", () => {
  const list = [
    { model: "p", score: 70 },
    { model: "a", score: 60 },
    { model: "b", score: 59.9 },
    { model: "c", score: 75 },
    { model: "d", score: 70 },
  ];
  it("default tolerance 10; equality at the floor passes; highest first", () => {
    expect(inTolerance(list).map((c) => c.model)).toEqual(["p", "c", "d", "a"]);
  });
  it("tolerance 0 keeps equal and better scores", () => {
    expect(inTolerance(list, 0).map((c) => c.model)).toEqual(["p", "c", "d"]);
  });
  it("a negative tolerance is treated as 0", () => {
    expect(effectiveTolerance(-5)).toBe(0);
    expect(inTolerance(list, -5).map((c) => c.model)).toEqual(["p", "c", "d"]);
  });
  it("non-finite tolerance falls back to the default 10", () => {
    expect(effectiveTolerance(Number.NaN)).toBe(10);
    expect(effectiveTolerance(undefined)).toBe(10);
  });
  it("empty list → empty", () => {
    expect(inTolerance([])).toEqual([]);
  });
});
