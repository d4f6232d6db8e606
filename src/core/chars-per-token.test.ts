import { describe, expect, it } from "vitest";
import {
  estimateTokens,
  INITIAL_CHARS_PER_TOKEN,
  learnCharsPerToken,
  promptTokens,
} from "./chars-per-token.js";

describe("§3 chars-per-token: starts 3.5, first valid report replaces, then += 0.3·(obs − ratio)", () => {
  it("starts at 3.5: ceil(chars / 3.5)", () => {
    expect(estimateTokens(7)).toBe(2);
    expect(estimateTokens(8)).toBe(3);
    expect(estimateTokens(0)).toBe(0);
  });
  it("the first valid report replaces the default", () => {
    const s = learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 400, 100);
    expect(s.ratio).toBe(4);
    // 4 + 0.3·(2 − 4) = 3.4
    expect(learnCharsPerToken(s, 200, 100).ratio).toBeCloseTo(3.4, 12);
  });
  it.each([
    [50, 100], // 0.5 chars/token
    [900, 100], // 9 chars/token
    [100, 0],
    [0, 100],
  ])("ignores a report of %i chars / %i tokens", (chars, tokens) => {
    expect(learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, chars, tokens)).toBe(INITIAL_CHARS_PER_TOKEN);
  });
  it("accepts the bounds 1 and 8", () => {
    expect(learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 100, 100).ratio).toBe(1);
    expect(learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 800, 100).ratio).toBe(8);
  });
  it("the engine's count wins over the estimate", () => {
    expect(promptTokens(123, 10_000)).toBe(123);
    expect(promptTokens(undefined, 350)).toBe(100);
    expect(promptTokens(0, 350)).toBe(100);
  });
});
