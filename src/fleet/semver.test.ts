import { describe, expect, it } from "vitest";
import { compareSemver, parseSemver } from "./semver.js";

describe("semver", () => {
  it.each([
    ["1.2.3", "1.2.4", -1],
    ["1.10.0", "1.9.9", 1],
    ["2.0.0", "2.0.0+build.5", 0],
    ["1.0.0-alpha", "1.0.0", -1],
    ["1.0.0-alpha.1", "1.0.0-alpha.beta", -1],
    ["1.0.0-2", "1.0.0-10", -1],
    ["1.0.0-rc.1", "1.0.0-beta.11", 1],
  ])("%s vs %s = %d", (a, b, want) => {
    expect(compareSemver(parseSemver(a)!, parseSemver(b)!)).toBe(want);
  });

  it.each(["1.2", "01.2.3", "1.2.3.4", "v1.2.3", "1.2.3-"])("refuses %j", (text) => {
    expect(parseSemver(text)).toBeUndefined();
  });
});
