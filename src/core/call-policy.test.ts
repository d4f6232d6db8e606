import { describe, expect, it } from "vitest";
import {
  afterRefusal,
  judgeTruncation,
  learnFromCall,
  lostRaceRefusal,
  type RefusedCall,
  refusalOf,
} from "./call-policy.js";
import { INITIAL_CHARS_PER_TOKEN, learnCharsPerToken } from "./chars-per-token.js";
import { circuitOpen } from "./circuit-breaker.js";
import { CIRCUIT_FAILURE_THRESHOLD } from "./constants.js";
import type { Decision } from "./decision.js";
import { successRateValue } from "./success-rate.js";

const claim: Decision = {
  kind: "claim",
  provider: "a",
  endpoint: "",
  model: "m",
  cold: false,
  loading: false,
  footprintMiB: 1,
  contextLength: 0,
  evicts: {},
  step: 1,
  cost: 0,
};
const queue: Decision = { kind: "queue", provider: "a", model: "m", estimatedWaitS: 3, message: "busy" };
const wait: Decision = { kind: "wait-for-memory", model: "m", message: "busy" };
const refuse = (reason: "gpu-busy" | "model-too-large" | "prompt-too-large"): Decision => ({
  kind: "refuse",
  reason,
  model: "m",
  message: "x",
  largestContext: 0,
});
const mulling: RefusedCall = { phase: "mulling", cannotWait: false, hasStaticBinding: false, waitLimitS: 90 };
const next = (d: Decision, call: Partial<RefusedCall> = {}) => {
  const r = refusalOf(d);
  if (r === undefined) throw new Error("a claim has no refusal");
  return afterRefusal(r, { ...mulling, ...call });
};

describe("§5/§6 what callers do with a decision", () => {
  it("queue and wait-for-memory are gpu-busy now, and the caller waits", () => {
    expect(refusalOf(queue)?.reason).toBe("gpu-busy");
    expect(refusalOf(wait)?.reason).toBe("gpu-busy");
    expect(next(queue)).toBe("wait");
    expect(next(wait)).toBe("wait");
    // A refusal decision is one waiting cannot change, even when it reads gpu-busy (triage).
    expect(next(refuse("gpu-busy"))).toBe("stand-aside");
    expect(refusalOf(claim)).toBeUndefined();
  });
  it("a lost race is gpu-busy and worth waiting for", () => {
    expect(afterRefusal(lostRaceRefusal("m"), mulling)).toBe("wait");
  });
  it("a queue decision carries its wait estimate; waiting for memory has none", () => {
    expect(refusalOf(queue)?.estimatedWaitS).toBe(3);
    expect(refusalOf(wait)?.estimatedWaitS).toBeUndefined();
  });
  it("a call that cannot wait falls back on gpu-busy and model-too-large, never on prompt-too-large", () => {
    const cannot = { cannotWait: true, hasStaticBinding: true };
    expect(next(queue, cannot)).toBe("static-fallback");
    expect(next(refuse("model-too-large"), cannot)).toBe("static-fallback");
    expect(next(refuse("prompt-too-large"), cannot)).toBe("stand-aside");
  });
  it("triage, cannot-wait without a binding, and a zero wait limit never wait", () => {
    expect(next(queue, { phase: "triage" })).toBe("stand-aside");
    expect(next(queue, { cannotWait: true })).toBe("stand-aside");
    expect(next(queue, { waitLimitS: 0 })).toBe("stand-aside");
    expect(next(refuse("model-too-large"))).toBe("stand-aside");
    expect(next(refuse("prompt-too-large"))).toBe("stand-aside");
  });
});

describe("§3 truncation, judged from the engine's own count", () => {
  const learned4 = learnCharsPerToken(INITIAL_CHARS_PER_TOKEN, 4000, 1000);
  it("a count that fills the context the call ran with is a cut", () => {
    expect(judgeTruncation({ promptChars: 3000, reportedTokens: 4096, contextSent: 4096 })).toBe(true);
    expect(judgeTruncation({ promptChars: 3000, reportedTokens: 4095, contextSent: 4096 })).toBe(false);
  });
  it("a count below any plausible ratio is a cut", () => {
    expect(judgeTruncation({ promptChars: 80_000, reportedTokens: 9_999 })).toBe(true);
    expect(judgeTruncation({ promptChars: 80_000, reportedTokens: 10_000 })).toBe(false);
  });
  it("with a learned ratio, less than half of its estimate is a cut", () => {
    expect(judgeTruncation({ promptChars: 40_000, reportedTokens: 4_999, ratio: learned4 })).toBe(true);
    expect(judgeTruncation({ promptChars: 40_000, reportedTokens: 5_000, ratio: learned4 })).toBe(false);
    // Before any ratio is learned, only the hard bounds judge.
    expect(
      judgeTruncation({ promptChars: 40_000, reportedTokens: 5_001, ratio: INITIAL_CHARS_PER_TOKEN }),
    ).toBe(false);
  });
  it("short prompts are never called cut for their template tokens", () => {
    // "hi" is 8 tokens of template and text; "Count to 3" 10.
    expect(judgeTruncation({ promptChars: 2, reportedTokens: 8, contextSent: 8192, ratio: learned4 })).toBe(
      false,
    );
    expect(judgeTruncation({ promptChars: 10, reportedTokens: 10, contextSent: 8192, ratio: learned4 })).toBe(
      false,
    );
  });
  it("nothing reported judges nothing", () => {
    expect(judgeTruncation({ promptChars: 1000, reportedTokens: 0, contextSent: 10 })).toBe(false);
  });
});

describe("§3 learning from a call", () => {
  it("failures open the circuit, a success closes it", () => {
    let h = learnFromCall(undefined, { model: "m", outcome: "failed", latencyMs: 0 }, 1_000);
    for (let i = 1; i < CIRCUIT_FAILURE_THRESHOLD; i++) {
      h = learnFromCall(h, { model: "m", outcome: "failed", latencyMs: 0 }, 1_000 + i);
    }
    expect(circuitOpen(h.circuit!, 2_000)).toBe(true);
    h = learnFromCall(h, { model: "m", outcome: "succeeded", latencyMs: 10 }, 3_000);
    expect(circuitOpen(h.circuit!, 3_000)).toBe(false);
  });
  it("latency is learned from successes only; success rate per model", () => {
    let h = learnFromCall(undefined, { model: "m", outcome: "succeeded", latencyMs: 100 }, 0);
    expect(h.latencyEmaMs).toBe(100);
    h = learnFromCall(h, { model: "m", outcome: "failed", latencyMs: 5_000 }, 0);
    expect(h.latencyEmaMs).toBe(100);
    for (let i = 0; i < 5; i++) h = learnFromCall(h, { model: "other", outcome: "failed", latencyMs: 0 }, 0);
    expect(successRateValue(h.successByModel!.get("other")!)).toBeLessThan(1);
    expect(h.successByModel!.get("m")).toBeDefined();
  });
  it("an unspecified outcome is neutral: any number of them never opens the circuit", () => {
    let h = learnFromCall(undefined, { model: "m", outcome: "succeeded", latencyMs: 100 }, 0);
    for (let i = 0; i < 10; i++)
      h = learnFromCall(h, { model: "m", outcome: "unspecified", latencyMs: 9_000 }, i);
    expect(circuitOpen(h.circuit!, 10)).toBe(false);
    expect(h.latencyEmaMs).toBe(100);
    expect(learnFromCall(undefined, { model: "m", outcome: "unspecified", latencyMs: 1 }, 0)).toEqual({});
  });
});
