import { describe, expect, it } from "vitest";
import { provider } from "../../test/helpers/core-fixtures.js";
import { anyCanHold, contextOf, holds, largestContext } from "./context-fit.js";

describe("§3 context of (provider, model): loaded context_length → provider contextLength → unknown", () => {
  const p = provider("a", { contextLength: 8192, loadedModelContextLengths: { m: 32768 } });
  it("prefers the loaded copy's context", () => expect(contextOf(p, "m")).toBe(32768));
  it("then the provider's configured context", () => expect(contextOf(p, "other")).toBe(8192));
  it("else unknown", () => expect(contextOf(provider("b"), "m")).toBeUndefined());
});

describe("§3 holds: prompt ≤ context; unknown never refuses", () => {
  it.each([
    [8192, 8192, true],
    [8192, 8193, false],
    [undefined, 1_000_000, true],
    [2048, 0, true],
    [2048, undefined, true],
  ])("context %s, prompt %s → %s", (ctx, prompt, ok) => {
    expect(holds(ctx, prompt)).toBe(ok);
  });
});

describe("any can hold / largest context", () => {
  const ps = [
    provider("a", { contextLength: 4096 }),
    provider("b", { loadedModelContextLengths: { m: 16384 } }),
  ];
  it("any provider and model whose context holds the prompt", () => {
    expect(anyCanHold(ps, ["m"], 16384)).toBe(true);
    expect(anyCanHold(ps, ["x"], 16384)).toBe(true); // b's context for x is unknown
    expect(anyCanHold([ps[0]!], ["x"], 4097)).toBe(false);
  });
  it("largest known context", () => {
    expect(largestContext(ps, ["m"])).toBe(16384);
    expect(largestContext([provider("c")], ["m"])).toBe(0);
  });
});
