import { describe, expect, it } from "vitest";
import { type Command, numberFlag, parseFlags } from "./command.js";

const cmd: Command = {
  name: "t",
  summary: "test",
  flags: {
    interval: { type: "string", default: "10000", env: "T_INTERVAL", description: "ms" },
    verbose: { type: "boolean", env: "T_VERBOSE", description: "more" },
  },
  run: async () => 0,
};

describe("numberFlag", () => {
  it("returns a valid number and names the flag of an invalid one", () => {
    expect(numberFlag({ interval: "250" }, "interval", 100)).toBe(250);
    expect(numberFlag({ interval: "100" }, "interval", 100)).toBe(100);
    for (const bad of ["99", "abc", "", " ", "-1", "Infinity"]) {
      expect(() => numberFlag({ interval: bad }, "interval", 100)).toThrow(
        /--interval: expected a number ≥ 100/,
      );
    }
    expect(() => numberFlag({}, "interval", 0)).toThrow(/--interval/);
  });
});

describe("parseFlags", () => {
  it("takes the flag, then the env variable, then the default", () => {
    expect(parseFlags(cmd, ["--interval", "5"], { T_INTERVAL: "7" }).values.interval).toBe("5");
    expect(parseFlags(cmd, [], { T_INTERVAL: "7" }).values.interval).toBe("7");
    expect(parseFlags(cmd, [], {}).values.interval).toBe("10000");
    expect(parseFlags(cmd, [], { T_VERBOSE: "yes" }).values.verbose).toBe(true);
  });

  it("rejects unknown flags and unreadable booleans with the name", () => {
    expect(() => parseFlags(cmd, ["--nope"], {})).toThrow(/t: .*nope/);
    expect(() => parseFlags(cmd, [], { T_VERBOSE: "maybe" })).toThrow(/T_VERBOSE/);
  });
});
