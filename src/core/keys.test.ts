import { describe, expect, it } from "vitest";
import { kvToken, kvUntoken } from "./keys.js";

describe("§8 KV-safe key tokens", () => {
  it.each([
    ["qwen2.5:14b", "qwen2_2e5_3a14b"],
    ["ns/agent", "ns_2fagent"],
    ["", "_"],
    ["Abc-09", "Abc-09"],
    ["a_b", "a_5fb"],
    ["é", "_e9"],
    ["€", "__20ac"],
    ["😀", "__d83d__de00"],
  ])("%j → %j", (input, token) => {
    expect(kvToken(input)).toBe(token);
  });

  it("distinct names give distinct tokens", () => {
    expect(kvToken("a.b")).not.toBe(kvToken("a_b"));
    expect(kvToken("a:b")).not.toBe(kvToken("a/b"));
  });
});

describe("§8 KV-safe key tokens read back", () => {
  it.each(["qwen2.5:14b", "ns/agent", "", "Abc-09", "a_b", "é", "€", "😀", "gpu.rack-2.a"])("%j", (s) => {
    expect(kvUntoken(kvToken(s))).toBe(s);
  });
  it.each(["a.b", "_zz", "_4", "__12", "a_", "x y"])("%j is no token", (t) => {
    expect(kvUntoken(t)).toBeUndefined();
  });
});
