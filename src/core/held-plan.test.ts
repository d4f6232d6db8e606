import { describe, expect, it } from "vitest";
import { iso, provider, snapshot, T0 } from "../../test/helpers/core-fixtures.js";
import { INITIAL_CHARS_PER_TOKEN, learnCharsPerToken } from "./chars-per-token.js";
import { heldPlanUsable, selectionPromptTokens } from "./held-plan.js";
import { indexSnapshot } from "./snapshot.js";

const plan = { provider: "a", model: "m" };

describe("§7 a held plan serves the real prompt only if its provider is ready and its context holds it", () => {
  it.each([
    ["usable", provider("a", { contextLength: 8192 }), 8192, { usable: true, contextLength: 8192 }],
    [
      "context too small",
      provider("a", { contextLength: 8192 }),
      8193,
      { usable: false, reason: "context-too-small" },
    ],
    ["unknown context", provider("a"), 1_000_000, { usable: true, contextLength: 0 }],
    ["not ready", provider("a", { ready: false }), 1, { usable: false, reason: "not-ready" }],
    ["stale", provider("a", { lastProbedAt: iso(T0 - 301_000) }), 1, { usable: false, reason: "stale" }],
    ["gone", provider("b"), 1, { usable: false, reason: "provider-gone" }],
  ])("%s", (_l, p, prompt, expected) => {
    expect(heldPlanUsable(indexSnapshot(snapshot({ providers: [p] })), plan, prompt)).toEqual(expected);
  });
  it("the loaded copy's context counts", () => {
    const p = provider("a", { contextLength: 2048, loadedModelContextLengths: { m: 16384 } });
    expect(heldPlanUsable(indexSnapshot(snapshot({ providers: [p] })), plan, 10_000).usable).toBe(true);
  });
});

describe("§7 planning at selection assumes a 16000-char prompt", () => {
  it("at the default 3.5 chars/token: ceil(16000 / 3.5) = 4572", () => {
    expect(selectionPromptTokens()).toBe(4572);
  });
  it("at a learned 4 chars/token: 4000", () => {
    expect(selectionPromptTokens(learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 4000, 1000))).toBe(4000);
  });
});
