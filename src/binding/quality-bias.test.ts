import { describe, expect, it } from "vitest";
import { effectiveBias, invalidBiasEntries, latencyTerm, parseBias } from "./quality-bias.js";
import { roundHalfAwayFromZero } from "./round.js";

describe("parseBias", () => {
  it.each<[string | undefined, number | undefined]>([
    ["0", 0],
    ["0.3", 0.3],
    ["0.5", 0.5],
    ["0.7", 0.7],
    ["1", 1],
    ["1.0", 1],
    [".5", 0.5],
    ["5e-1", 0.5],
    ["-0", 0],
    ["abc", undefined],
    ["1.5", undefined],
    ["-0.1", undefined],
    ["", undefined],
    [" 0.5", undefined],
    ["0.5 ", undefined],
    ["NaN", undefined],
    ["Infinity", undefined],
    ["0x1", undefined],
    ["1e1", undefined],
    [undefined, undefined],
  ])("%j → %s", (s, want) => {
    expect(parseBias(s)).toBe(want);
  });

  it("never returns negative zero", () => {
    expect(Object.is(parseBias("-0"), 0)).toBe(true);
  });
});

describe("latencyTerm: high round(100b), low round(100(1−b)), medium tent", () => {
  // b:     high  medium  low
  it.each<[number, number, number, number]>([
    [0, 0, 0, 100],
    [0.3, 30, 60, 70],
    [0.5, 50, 100, 50],
    [0.7, 70, 60, 30],
    [1, 100, 0, 0],
    [0.4, 40, 80, 60],
    // half rounds away from zero: 100·0.125 = 12.5 → 13; tent 100 − 0.375·200 = 25
    [0.125, 13, 25, 88],
    // 100·0.005 = 0.5 → 1, low 99.5 → 100, tent 100 − 0.495·200 = 1
    [0.005, 1, 1, 100],
    // tent 100 − 0.4975·200 = 0.5 → 1 (not 0)
    [0.0025, 0, 1, 100],
  ])("b=%s → high %s, medium %s, low %s", (b, high, medium, low) => {
    expect(latencyTerm(b, { latencyClass: "high" })).toBe(high);
    expect(latencyTerm(b, { latencyClass: "medium" })).toBe(medium);
    expect(latencyTerm(b, { latencyClass: "low" })).toBe(low);
  });

  it.each<Record<string, string>>([{}, { latencyClass: "ultra" }, { latencyClass: "High" }])(
    "other classes give 0: %j",
    (labels) => {
      expect(latencyTerm(0.7, labels)).toBe(0);
    },
  );
});

describe("effectiveBias: max of the agent's capabilities, else default, else none", () => {
  const bias = { reasoning: "0.7", "tool-calling": "0.3", observability: "0.4", default: "0.5" };
  it.each<[string, Record<string, string>, string[], number | undefined]>([
    ["max of mapped capabilities", bias, ["tool-calling", "observability"], 0.4],
    ["reasoning wins", bias, ["tool-calling", "reasoning"], 0.7],
    ["unmapped falls back to default", bias, ["kubernetes"], 0.5],
    ["no capabilities: default", bias, [], 0.5],
    ["no default: none", { reasoning: "0.7" }, ["kubernetes"], undefined],
    ["empty map: none", {}, ["reasoning"], undefined],
    ["invalid capability value is ignored", { reasoning: "abc", default: "0.2" }, ["reasoning"], 0.2],
    ["invalid value ignored, valid one used", { a: "1.5", b: "0.1" }, ["a", "b"], 0.1],
    ["invalid default: none", { default: "-0.1" }, ["x"], undefined],
    ["zero is a bias, not absent", { a: "0", default: "0.9" }, ["a"], 0],
  ])("%s", (_name, qb, caps, want) => {
    expect(effectiveBias(qb, caps)).toBe(want);
  });

  it("inherited object keys are not capabilities", () => {
    expect(effectiveBias({}, ["constructor", "toString"])).toBeUndefined();
  });
});

describe("invalidBiasEntries", () => {
  it("lists the ignored keys, sorted", () => {
    expect(invalidBiasEntries({ z: "abc", a: "1.5", ok: "0.4", e: "" })).toEqual(["a", "e", "z"]);
  });
});

describe("roundHalfAwayFromZero", () => {
  it.each([
    [0.5, 1],
    [1.5, 2],
    [2.5, 3],
    [-0.5, -1],
    [-2.5, -3],
    [0.49, 0],
    [70.00000000000001, 70],
    [99.49999999999999, 100],
    [0, 0],
  ])("%s → %s", (x, want) => {
    expect(roundHalfAwayFromZero(x)).toBe(want);
  });

  it("returns +0 for small negatives", () => {
    expect(Object.is(roundHalfAwayFromZero(-0.2), 0)).toBe(true);
  });
});
