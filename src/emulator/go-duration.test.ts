import { describe, expect, it } from "vitest";
import {
  DurationError,
  formatDurationMs,
  parseGoDuration,
  parseKeepAlive,
  parseKeepAliveSetting,
} from "./go-duration.js";

describe("parseGoDuration", () => {
  it.each([
    ["0", 0],
    ["5m", 300_000],
    ["1h30m", 5_400_000],
    ["300ms", 300],
    ["1.5h", 5_400_000],
    ["2h45m10s", 9_910_000],
    ["1500us", 1.5],
    ["1500µs", 1.5],
    ["-1s", -1000],
    ["+2s", 2000],
    [".5s", 500],
  ])("%s → %d ms", (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each([
    ["3600", 'time: missing unit in duration "3600"'],
    ["", 'time: invalid duration ""'],
    ["1d", 'time: unknown unit "d" in duration "1d"'],
    ["m", 'time: invalid duration "m"'],
    ["5m-", 'time: unknown unit "m-" in duration "5m-"'],
  ])("rejects %j with Go's message", (text, message) => {
    expect(() => parseGoDuration(text)).toThrow(new DurationError(message));
  });
});

describe("keep_alive", () => {
  it("request values: number = seconds, string = Go duration, negative = forever, null = unset", () => {
    expect(parseKeepAlive(30)).toBe(30_000);
    expect(parseKeepAlive(0)).toBe(0);
    expect(parseKeepAlive(-1)).toBe(Number.POSITIVE_INFINITY);
    expect(parseKeepAlive("10m")).toBe(600_000);
    expect(parseKeepAlive("-1m")).toBe(Number.POSITIVE_INFINITY);
    expect(parseKeepAlive(undefined)).toBeUndefined();
    expect(parseKeepAlive(null)).toBeUndefined();
    expect(() => parseKeepAlive("3600")).toThrow(/missing unit/);
    expect(() => parseKeepAlive(true)).toThrow("Unsupported type: 'bool'");
  });

  it("OLLAMA_KEEP_ALIVE also takes bare seconds", () => {
    expect(parseKeepAliveSetting("3600")).toBe(3_600_000);
    expect(parseKeepAliveSetting("-1")).toBe(Number.POSITIVE_INFINITY);
    expect(parseKeepAliveSetting("24h")).toBe(86_400_000);
    expect(() => parseKeepAliveSetting("soon")).toThrow(DurationError);
  });

  it("formats durations for the state page", () => {
    expect(formatDurationMs(300_000)).toBe("5m");
    expect(formatDurationMs(5_400_000)).toBe("1h30m");
    expect(formatDurationMs(250)).toBe("250ms");
    expect(formatDurationMs(Number.POSITIVE_INFINITY)).toBe("forever");
  });
});
