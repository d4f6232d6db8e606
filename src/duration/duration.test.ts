import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { formatDuration, parseDuration } from "./duration.js";

describe("parseDuration", () => {
  it.each([
    ["30s", 30_000],
    ["5m", 300_000],
    ["1h", 3_600_000],
    ["1h30m", 5_400_000],
    ["2h45m10s", 9_910_000],
    ["250ms", 250],
    ["1.5h", 5_400_000],
    [".5s", 500],
    ["1m0.25s", 60_250],
    [" 10s ", 10_000],
    ["+3s", 3000],
  ])("%j is %d ms", (text, ms) => {
    expect(parseDuration(text, "f")).toBe(ms);
  });

  it.each([
    ["", "empty"],
    ["30", "no unit"],
    ["1h30", "no unit"],
    ["5 m", "has no unit"],
    ["5M", 'unit "M" is not a duration unit'],
    ["1d", 'unit "d" is not a duration unit'],
    ["1hour", 'unit "hour" is not a duration unit'],
    ["abc", "not a duration"],
    ["-5s", "negative"],
    ["10ns", "finer than a millisecond"],
    ["3us", "finer than a millisecond"],
    ["0s", "shorter than the minimum of 1ms"],
    ["0", "shorter than the minimum"],
    ["+", "no number"],
  ])("%j is refused (%s), naming the field", (text, why) => {
    const err = catchError(() => parseDuration(text, "spec.webhook.pollInterval"));
    expect(KubemootError.is(err, ErrorCode.InvalidArgument)).toBe(true);
    expect((err as KubemootError).field).toBe("spec.webhook.pollInterval");
    expect((err as KubemootError).message).toContain(why);
  });

  it("refuses values that are not strings", () => {
    expect(() => parseDuration(30, "f")).toThrow(/expected a duration string/);
    expect(() => parseDuration(undefined, "f")).toThrow(/got undefined/);
  });

  it("takes a minimum; zero is allowed when the minimum is zero", () => {
    expect(parseDuration("0s", "f", { minMs: 0 })).toBe(0);
    expect(parseDuration("0", "f", { minMs: 0 })).toBe(0);
    expect(() => parseDuration("500ms", "f", { minMs: 1000 })).toThrow(/minimum of 1s/);
  });

  it("formatDuration and parseDuration round-trip whole milliseconds", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 * 24 * 3_600_000 }), (ms) => {
        expect(parseDuration(formatDuration(ms), "f")).toBe(ms);
      }),
    );
    expect(formatDuration(5_400_000)).toBe("1h30m");
    expect(formatDuration(1500)).toBe("1s500ms");
    expect(formatDuration(0)).toBe("0s");
  });
});

function catchError(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}
