import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  estimateTokens,
  generousTokens,
  INITIAL_CHARS_PER_TOKEN,
  learnCharsPerToken,
  promptTokens,
} from "./chars-per-token.js";
import { CHARS_PER_TOKEN_MIN_SAMPLE_TOKENS } from "./constants.js";

describe("§3 chars-per-token: starts 3.5, learns from long reports weighted by size", () => {
  it("starts at 3.5: ceil(chars / 3.5)", () => {
    expect(estimateTokens(7)).toBe(2);
    expect(estimateTokens(8)).toBe(3);
    expect(estimateTokens(0)).toBe(0);
  });
  it("the first learnable report replaces the default; equal reports then move it like an EMA of 0.3", () => {
    const s = learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 4000, 1000);
    expect(s.ratio).toBe(4);
    // (0.7·4000 + 2000) / (0.7·1000 + 1000) = 4800 / 1700
    expect(learnCharsPerToken(s, 2000, 1000).ratio).toBeCloseTo(4800 / 1700, 12);
    let steady = s;
    for (let i = 0; i < 60; i++) steady = learnCharsPerToken(steady, 4000, 1000);
    // At steady state a new equal-size report weighs 0.3: 4 + 0.3·(2 − 4) = 3.4
    expect(learnCharsPerToken(steady, 2000, 1000).ratio).toBeCloseTo(3.4, 6);
  });
  it("a long report weighs more than a short one", () => {
    const s = learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 4000, 1000); // ratio 4
    const short = learnCharsPerToken(s, 600, 300); // ratio 2, 300 tokens
    const long = learnCharsPerToken(s, 6000, 3000); // ratio 2, 3000 tokens
    expect(long.ratio).toBeLessThan(short.ratio);
  });
  it.each([
    [500, 1000], // 0.5 chars/token
    [9000, 1000], // 9 chars/token
    [100, 0],
    [0, 1000],
    [10, 10], // "Count to 3": a ratio of 1, but mostly template
    [2, 8], // "hi"
    [(CHARS_PER_TOKEN_MIN_SAMPLE_TOKENS - 1) * 3, CHARS_PER_TOKEN_MIN_SAMPLE_TOKENS - 1],
  ])("ignores a report of %i chars / %i tokens", (chars, tokens) => {
    expect(learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, chars, tokens)).toBe(INITIAL_CHARS_PER_TOKEN);
  });
  it("accepts the bounds 1 and 8 at the minimum sample size", () => {
    const n = CHARS_PER_TOKEN_MIN_SAMPLE_TOKENS;
    expect(learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, n, n).ratio).toBe(1);
    expect(learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 8 * n, n).ratio).toBe(8);
  });
  it("the engine's count wins over the estimate", () => {
    expect(promptTokens(123, 10_000)).toBe(123);
    expect(promptTokens(undefined, 350)).toBe(100);
    expect(promptTokens(0, 350)).toBe(100);
  });
  it("the generous count uses 1.5 × the larger of the learned and default ratios, at most 8", () => {
    expect(generousTokens(21_000)).toBe(4000); // 21000 / 5.25
    const code = learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 2500, 1000); // 2.5: code-like
    expect(generousTokens(21_000, code)).toBe(4000); // the default still bounds it
    const prose = learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 6000, 1000); // 6
    expect(generousTokens(24_000, prose)).toBe(3000); // 24000 / min(8, 9)
    expect(generousTokens(0)).toBe(0);
  });
  it("no sequence of short calls moves the ratio, so a prompt the engine counts as fitting stays placeable", () => {
    // Short calls (under the minimum sample) with any plausible or implausible ratio.
    const shortCall = fc.record({
      tokens: fc.integer({ min: 1, max: CHARS_PER_TOKEN_MIN_SAMPLE_TOKENS - 1 }),
      ratio: fc.double({ min: 0.1, max: 20, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(shortCall, { maxLength: 50 }), (calls) => {
        let s = INITIAL_CHARS_PER_TOKEN;
        for (const c of calls) s = learnCharsPerToken(s, Math.round(c.tokens * c.ratio), c.tokens);
        // The prompt: 20,000 chars the engine counts at 5,722 tokens, num_ctx 8,192.
        expect(generousTokens(20_000, s)).toBeLessThanOrEqual(8192);
        expect(estimateTokens(20_000, s)).toBeLessThanOrEqual(8192);
      }),
    );
  });
});
