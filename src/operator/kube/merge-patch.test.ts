import { describe, expect, it } from "vitest";
import { jsonEqual, mergePatchDiff } from "./merge-patch.js";

describe("mergePatchDiff", () => {
  it.each([
    ["equal objects, other key order", { a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }, undefined],
    ["a changed scalar", { a: 1, b: 2 }, { a: 1, b: 3 }, { b: 3 }],
    ["a removed key becomes null", { a: 1, b: 2 }, { a: 1 }, { b: null }],
    [
      "a nested removal",
      { s: { model: "x", triage: { model: "y" } } },
      { s: { model: "x" } },
      { s: { triage: null } },
    ],
    ["arrays are replaced whole", { l: [1, 2, 3] }, { l: [1, 3] }, { l: [1, 3] }],
    ["a new subtree is sent whole", {}, { s: { a: 1 } }, { s: { a: 1 } }],
    ["undefined members are ignored", { a: 1 }, { a: 1, b: undefined }, undefined],
    ["from nothing", undefined, { a: 1 }, { a: 1 }],
  ])("%s", (_name, current, desired, expected) => {
    expect(mergePatchDiff(current, desired)).toEqual(expected);
  });

  it("Dates compare as their ISO strings", () => {
    const d = new Date("2026-05-15T15:30:00Z");
    expect(mergePatchDiff({ t: "2026-05-15T15:30:00.000Z" }, { t: d })).toBeUndefined();
  });
});

describe("jsonEqual", () => {
  it("ignores key order but not array order", () => {
    expect(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
  });
});
