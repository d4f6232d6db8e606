import { describe, expect, it } from "vitest";
import { hasUnprintable, MAX_QUOTED_CHARS, printable, quoteInput } from "./quote.js";

describe("quoteInput", () => {
  it("quotes short input whole", () => {
    expect(quoteInput("crew/a1")).toBe('"crew/a1"');
  });

  it("quotes at most a prefix of long input and says how long it was", () => {
    const q = quoteInput("x".repeat(1 << 20));
    expect(q).toBe(`"${"x".repeat(MAX_QUOTED_CHARS)}…" (1048576 characters)`);
  });

  it("never splits a surrogate pair", () => {
    expect(quoteInput("😀".repeat(5), 3)).toBe('"😀😀😀…" (10 characters)');
  });

  it("replaces control characters, line separators and bidi overrides", () => {
    const s = "a\u001b[31m\n\u0000\u0085\u2028\u202e\u0007b";
    expect(hasUnprintable(s)).toBe(true);
    expect(printable(s)).toBe("a?[31m??????b");
    expect(hasUnprintable(printable(s))).toBe(false);
    expect(hasUnprintable("qwen3:8b é ü 模型")).toBe(false);
  });
});
