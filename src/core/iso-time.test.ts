import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseIsoMs } from "./iso-time.js";

describe("parseIsoMs agrees with Date.parse", () => {
  it.each([
    "2026-06-11T00:00:00Z",
    "2026-06-11T00:00:00.5Z",
    "2026-06-11T00:00:00.123Z",
    "2026-06-11T00:00:00.123456Z",
    "2024-02-29T23:59:59Z",
    "2023-02-29T00:00:00Z",
    "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z",
    "2026-06-11T00:00:00+02:00",
    "2026-06-11",
    "2026-13-01T00:00:00Z",
    "2026-06-11T24:00:00Z",
    "2026-06-11T00:00:00.Z",
    "",
    "garbage",
  ])("%j", (s) => {
    expect(Object.is(parseIsoMs(s), Date.parse(s))).toBe(true);
  });

  it("property: any toISOString round-trips", () => {
    fc.assert(
      fc.property(fc.integer({ min: -30_000_000_000_000, max: 30_000_000_000_000 }), (ms) => {
        const s = new Date(ms).toISOString();
        expect(parseIsoMs(s)).toBe(Date.parse(s));
      }),
    );
  });
});
