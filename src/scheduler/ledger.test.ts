// The call ledger on its own: the verdict Attribute gives is the one the proxy logs (both read
// the ledger), and a cut prompt teaches no chars-per-token ratio.
import { describe, expect, it } from "vitest";
import { CallLedger } from "./ledger.js";
import type { PlacementOut, ReleaseInput } from "./types.js";

const placement = (ticketId: string): PlacementOut => ({
  ticketId,
  provider: "gpu",
  endpoint: "http://gpu:11434",
  model: "qwen3:8b",
  coldLoad: false,
  evicted: [],
  footprintMiB: 6000,
  contextLength: 4096,
  expiresAtMs: 10_000,
  fromPlan: false,
  staticFallback: false,
  engine: "ollama",
  expectedCachedTokens: 0,
});
const outcome = (ticketId: string, over: Partial<ReleaseInput> = {}): ReleaseInput => ({
  ticketId,
  outcome: "succeeded",
  latencyMs: 100,
  promptTokens: 0,
  promptChars: 0,
  outputTokens: 0,
  error: "",
  ...over,
});

describe("CallLedger", () => {
  it("judges a call that filled the context it was sent with as cut, and does not learn from it", () => {
    const ledger = new CallLedger(() => 1_000);
    ledger.remember(placement("t1"), "ns/a", 1000, 0);
    const e = ledger.finish(outcome("t1", { promptTokens: 4096, promptChars: 4096 * 2, contextSent: 4096 }));
    expect(e?.truncated).toBe(true);
    expect(ledger.attribution("t1")?.truncated).toBe(true);
    expect(ledger.charsPerToken.learned).toBe(false);
  });
  it("learns the ratio and the provider's health from a call that fit", () => {
    const ledger = new CallLedger(() => 1_000);
    ledger.remember(placement("t2"), "ns/a", 1000, 0);
    const e = ledger.finish(outcome("t2", { promptTokens: 1000, promptChars: 4000, contextSent: 4096 }));
    expect(e?.truncated).toBe(false);
    expect(ledger.charsPerToken).toMatchObject({ ratio: 4, learned: true });
    expect(ledger.health.get("gpu")?.latencyEmaMs).toBe(100);
  });
  it("a call that never ran teaches nothing; a second finish is refused", () => {
    const ledger = new CallLedger(() => 1_000);
    ledger.remember(placement("t3"), "ns/a", 1000, 0);
    expect(ledger.finish(outcome("t3", { outcome: "failed", ran: false }))).toBeDefined();
    expect(ledger.health.has("gpu")).toBe(false);
    expect(ledger.finish(outcome("t3"))).toBeUndefined();
    expect(ledger.active).toBe(0);
  });
  it("forgets the oldest released calls beyond its capacity, never an active one", () => {
    const ledger = new CallLedger(() => 1_000, 2);
    ledger.remember(placement("a"), "ns/a", 1, 0);
    ledger.remember(placement("b"), "ns/a", 1, 0);
    ledger.finish(outcome("b"));
    ledger.remember(placement("c"), "ns/a", 1, 0);
    ledger.finish(outcome("c"));
    expect(ledger.get("a")).toBeDefined();
    expect(ledger.get("b")).toBeUndefined();
    expect(ledger.get("c")).toBeDefined();
  });
});

describe("prefill saved by the prompt cache", () => {
  it("is the reused tokens at the prefill rate the call measured, and 0 with nothing reused", () => {
    const ledger = new CallLedger(() => 1_000);
    ledger.remember({ ...placement("t1"), expectedCachedTokens: 3000 }, "ns/a", 4000, 0);
    // 1,000 tokens evaluated in 250 ms: 4,000 tokens/s, so the 3,000 reused saved 750 ms.
    ledger.finish(outcome("t1", { promptTokens: 4000, cachedPromptTokens: 3000, promptEvalMs: 250 }));
    const a = ledger.attribution("t1");
    expect(a?.expectedCachedPromptTokens).toBe(3000);
    expect(a?.prefillSavedMs).toBeCloseTo(750, 6);
    ledger.remember(placement("t2"), "ns/a", 4000, 0);
    ledger.finish(outcome("t2", { promptTokens: 4000, promptEvalMs: 1000 }));
    expect(ledger.attribution("t2")?.prefillSavedMs).toBe(0);
  });

  it("uses the default rate before any measurement", () => {
    const ledger = new CallLedger(() => 1_000);
    ledger.remember(placement("t1"), "ns/a", 100, 0);
    // 40 evaluated tokens are too few to measure a rate: 2,000 tokens/s, 1,000 tokens → 500 ms.
    ledger.finish(outcome("t1", { promptTokens: 1040, cachedPromptTokens: 1000, promptEvalMs: 5 }));
    expect(ledger.attribution("t1")?.prefillSavedMs).toBeCloseTo(500, 6);
  });
});
