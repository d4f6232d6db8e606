import { describe, expect, it } from "vitest";
import {
  answerText,
  answerToken,
  chatPromptTokens,
  countTextTokens,
  generatePromptTokens,
  truncateChat,
  truncateTokens,
} from "./tokenizer.js";

const text = (n: number) => "x".repeat(n);
const msg = (role: string, chars: number) => ({ role, content: text(chars) });

describe("tokenizer", () => {
  it.each([
    ["", 0],
    ["a", 1],
    [text(35), 10],
    [text(36), 11],
    ["héllo wörld", 4], // 11 code points
    ["🙂🙂🙂🙂", 2], // 4 code points, not 8 UTF-16 units
  ])("%j is %d tokens", (t, n) => {
    expect(countTextTokens(t)).toBe(n);
  });

  it("renders chats with 4 tokens per message and 3 for the answer header", () => {
    expect(chatPromptTokens([msg("user", 35)])).toBe(4 + 10 + 3);
    expect(chatPromptTokens([msg("system", 35), msg("user", 35)])).toBe(14 + 14 + 3);
    expect(generatePromptTokens(text(35), undefined, false)).toBe(17);
    expect(generatePromptTokens(text(35), text(35), false)).toBe(31);
    expect(generatePromptTokens(text(35), undefined, true)).toBe(10);
  });
});

describe("truncateChat (Ollama's rule)", () => {
  // Every message is 14 tokens; the answer header 3.
  const history = [
    msg("system", 35),
    ...Array.from({ length: 10 }, (_, i) => msg(i % 2 ? "assistant" : "user", 35)),
  ];

  it("keeps everything when it fits", () => {
    const r = truncateChat(history, 1000);
    expect(r.dropped).toBe(0);
    expect(r.evaluatedTokens).toBe(11 * 14 + 3);
  });

  it("drops the oldest non-system messages, keeping the system prompt and the last message", () => {
    // 64 tokens: system 14 + header 3 leaves 47 → the 3 most recent messages (42).
    const r = truncateChat(history, 64);
    expect(r.kept).toHaveLength(4);
    expect(r.kept[0]?.role).toBe("system");
    expect(r.kept.at(-1)).toBe(history.at(-1));
    expect(r.dropped).toBe(7);
    expect(r.evaluatedTokens).toBe(59);
  });

  it("always keeps the last message, then cuts at token level to num_ctx", () => {
    const r = truncateChat([msg("system", 35), msg("user", 35), msg("user", 3500)], 100);
    expect(r.kept.map((m) => m.content.length)).toEqual([35, 3500]);
    expect(r.renderedTokens).toBe(14 + 4 + 1000 + 3);
    expect(r.evaluatedTokens).toBe(100);
  });

  it("keeps system messages that sit among dropped ones", () => {
    const r = truncateChat([msg("user", 350), msg("system", 35), msg("user", 350), msg("user", 35)], 40);
    expect(r.kept.map((m) => m.role)).toEqual(["system", "user"]);
  });
});

describe("truncateTokens", () => {
  it("keeps num_keep head tokens and drops the middle", () => {
    expect(truncateTokens(100, 200)).toEqual({ evaluated: 100, dropped: 0, keptHead: 100 });
    expect(truncateTokens(1000, 128)).toEqual({ evaluated: 128, dropped: 872, keptHead: 4 });
    expect(truncateTokens(1000, 128, 0)).toEqual({ evaluated: 128, dropped: 872, keptHead: 0 });
  });
});

describe("deterministic answers", () => {
  it("repeat for the same seed and end with a period", () => {
    expect(answerText(42, 8)).toBe(answerText(42, 8));
    expect(answerText(42, 8)).not.toBe(answerText(43, 8));
    expect(answerText(7, 5).endsWith(".")).toBe(true);
    expect(answerToken(7, 1, 5).startsWith(" ")).toBe(true);
    let s = "";
    for (let i = 0; i < 5; i++) s += answerToken(7, i, 5);
    expect(s).toBe(answerText(7, 5));
  });
});

describe("truncateChat at scale", () => {
  it("handles a 50 000-message history quickly", () => {
    const many = Array.from({ length: 50_000 }, (_, i) => ({
      role: i === 0 ? "system" : "user",
      content: "y".repeat(35),
    }));
    const t0 = performance.now();
    const r = truncateChat(many, 4096);
    expect(performance.now() - t0).toBeLessThan(2000);
    // system 14 + header 3; (4096 − 17) / 14 = 291 recent messages.
    expect(r.kept).toHaveLength(292);
    expect(r.evaluatedTokens).toBe(17 + 291 * 14);
  });
});
