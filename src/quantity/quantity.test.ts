import { describe, expect, it } from "vitest";
import {
  addQuantities,
  canonicalQuantity,
  compareQuantities,
  parseQuantity,
  quantityAsFloat,
  quantityAsInteger,
  quantityMilliCeil,
} from "./quantity.js";

const q = (s: string) => {
  const v = parseQuantity(s);
  if (!v) throw new Error(`not a quantity: ${s}`);
  return v;
};

describe("parseQuantity (apimachinery's suffixes)", () => {
  it.each([
    ["1Ki", "1024"],
    ["1Mi", "1048576"],
    ["1Gi", "1073741824"],
    ["1Ti", String(2 ** 40)],
    ["1Pi", String(2n ** 50n)],
    ["1Ei", String(2n ** 60n)],
    ["1.5Gi", "1610612736"],
    ["1k", "1000"],
    ["2M", "2000000"],
    ["1G", "1000000000"],
    ["1T", "1000000000000"],
    ["1P", "1000000000000000"],
    ["1E", "1000000000000000000"],
    ["500m", "5e-1"],
    ["1500m", "15e-1"],
    ["1e3", "1000"],
    ["1E3", "1000"],
    ["12e-2", "12e-2"],
    ["100n", "1e-7"],
    ["-2Ki", "-2048"],
    ["+7", "7"],
    [".5", "5e-1"],
    ["0", "0"],
  ])("%s = %s", (text, canonical) => {
    expect(canonicalQuantity(q(text))).toBe(canonical);
  });

  it.each(["", "Gi", " 1Gi", "1 Gi", "1gi", "1Kib", "1.2.3", "abc", "1e", "0x10", "1e999"])(
    "refuses %j",
    (text) => {
      expect(parseQuantity(text)).toBeUndefined();
    },
  );

  it("compares binary and decimal forms exactly", () => {
    expect(compareQuantities(q("1Gi"), q("1024Mi"))).toBe(0);
    expect(compareQuantities(q("1G"), q("1Gi"))).toBe(-1);
    expect(compareQuantities(q("141Gi"), q("80Gi"))).toBe(1);
    expect(compareQuantities(q("999m"), q("1"))).toBe(-1);
  });

  it("adds and converts", () => {
    expect(canonicalQuantity(addQuantities(q("1Gi"), q("512Mi")))).toBe(String(1.5 * 2 ** 30));
    expect(quantityAsInteger(q("2k"))).toBe(2000n);
    expect(quantityAsInteger(q("1500m"))).toBeUndefined();
    expect(quantityAsInteger(q("10E"))).toBeUndefined(); // beyond int64
    expect(quantityAsFloat(q("1500m"))).toBe(1.5);
  });
});

describe("milli-units, rounded up", () => {
  it.each([
    ["100m", 100n],
    ["1", 1000n],
    ["1Gi", 1073741824000n],
    ["0.5", 500n],
    ["1u", 1n],
    ["1500u", 2n],
    ["0", 0n],
  ])("%s → %s", (text, milli) => {
    expect(quantityMilliCeil(parseQuantity(text)!)).toBe(milli);
  });
});
