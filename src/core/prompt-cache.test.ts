// Prompt caches in placement (docs/rules/placement.md §5.5): the copy that holds the
// conversation's prefix is cheaper by the prefill it saves, waited for while that is sooner than
// a free slot elsewhere, and never makes the decision expect a longer time than without it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { provider, RTX_4090_MIB, snapshot, T0, ticket } from "../../test/helpers/core-fixtures.js";
import { PREFILL_TOKENS_PER_S } from "./constants.js";
import { type ConversationSeen, indexConversations } from "./conversation-seen.js";
import type { Decision } from "./decision.js";
import { decide, type PlanRequest } from "./planner.js";
import { cachedTokensAt } from "./prompt-cache.js";
import type { PlacementSnapshot, PolicyName, ProviderHealth } from "./snapshot.js";

const Q8 = "qwen3:8b";
const F8 = 5979;
const warm = (name: string) =>
  provider(name, { totalVramMiB: RTX_4090_MIB, maxParallel: 1, loadedModelFootprintsMiB: { [Q8]: F8 } });
/** Both cards measured: a call takes `serviceS` there, prompts prefill at `prefill` tokens/s. */
const health = (serviceS: number, prefill?: number): Map<string, ProviderHealth> => {
  const h: ProviderHealth = {
    latencyEmaMs: serviceS * 1000,
    serviceByModel: new Map([[Q8, serviceS * 1000]]),
    ...(prefill ? { prefillByModel: new Map([[Q8, prefill]]) } : {}),
  };
  return new Map([
    ["a", h],
    ["b", h],
  ]);
};
const call = (tokens: number, provider = "b"): PlanRequest => ({
  candidates: [{ model: Q8, score: 80 }],
  promptTokens: 20_000,
  cachedPrefixes: tokens > 0 ? [{ provider, model: Q8, tokens }] : [],
});
const by = (policy: PolicyName) => (s: PlacementSnapshot, r: PlanRequest) => decide(s, r, { policy });

describe("cached prefixes", () => {
  it("are looked up by copy, the largest when given twice", () => {
    const list = [
      { provider: "a", model: Q8, tokens: 10 },
      { provider: "a", model: Q8, tokens: 30 },
      { provider: "b", model: Q8, tokens: 99 },
    ];
    expect([
      cachedTokensAt(list, "a", Q8),
      cachedTokensAt(list, "a", "other"),
      cachedTokensAt([], "a", Q8),
    ]).toEqual([30, 0, 0]);
  });
});

describe("time policy: the copy holding the prefix", () => {
  const both = () => snapshot({ providers: [warm("a"), warm("b")], health: health(12) });

  it("is chosen among free copies, for the prefill it saves", () => {
    // Without a cache the two copies are equal: the name breaks the tie.
    expect(by("time")(both(), call(0))).toMatchObject({ kind: "claim", provider: "a" });
    const d = by("time")(both(), call(18_000));
    expect(d).toMatchObject({ kind: "claim", provider: "b" });
    // 18,000 tokens at the default rate: 9 s off a 12 s call.
    expect((d as { cost: number }).cost).toBeCloseTo(12 - 18_000 / PREFILL_TOKENS_PER_S, 6);
  });

  it("is waited for while the wait is shorter than the prefill it saves, else left for a free copy", () => {
    // b's slot is taken by a call that started 8 s ago (a 12 s call: about 4 s left).
    const busy = (rate?: number) =>
      snapshot({
        providers: [warm("a"), warm("b")],
        tickets: [ticket("b", Q8, { claimedAtMs: T0 - 8_000 })],
        health: health(12, rate),
      });
    // 9 s saved against about 4 s of waiting: the call waits for its cache.
    expect(by("time")(busy(), call(18_000))).toMatchObject({ kind: "queue", provider: "b" });
    // A fast prefill (30,000 tokens/s here) saves 0.6 s: not worth the wait.
    expect(by("time")(busy(30_000), call(18_000))).toMatchObject({ kind: "claim", provider: "a" });
    // A call that cannot wait never queues for its cache.
    expect(by("time")(busy(), { ...call(18_000), cannotWait: true })).toMatchObject({
      kind: "claim",
      provider: "a",
    });
  });
});

describe("weighted policy: the prefix-cache term", () => {
  it("ranks the copy holding the prefix first among free copies", () => {
    const s = snapshot({ providers: [warm("a"), warm("b")], health: health(12) });
    expect(by("kubemoot")(s, call(0))).toMatchObject({ kind: "claim", provider: "a" });
    expect(by("kubemoot")(s, call(18_000))).toMatchObject({ kind: "claim", provider: "b" });
  });
});

/** Expected seconds of a time-policy decision: a claim's cost, a queue's expected finish. */
function expected(d: Decision): number | undefined {
  if (d.kind === "claim") return d.cost;
  if (d.kind === "queue") return d.expectedS;
  return undefined;
}

describe("property: a cache never makes the expected time longer", () => {
  it("with any copies holding any share of the prompt, the decision expects no longer than without", () => {
    const names = ["a", "b", "c"];
    fc.assert(
      fc.property(
        fc.record({
          busy: fc.subarray(names),
          startedS: fc.constantFrom(1, 5, 11),
          serviceS: fc.constantFrom(2, 12, 40),
          prefill: fc.option(fc.constantFrom(500, 2000, 8000, 30_000), { nil: undefined }),
          cached: fc.array(fc.record({ provider: fc.constantFrom(...names), tokens: fc.nat(40_000) }), {
            maxLength: 3,
          }),
          cannotWait: fc.boolean(),
        }),
        (g) => {
          const providers = names.map(warm);
          const tickets = g.busy.map((p) => ticket(p, Q8, { claimedAtMs: T0 - g.startedS * 1000 }));
          const h = new Map(names.map((n) => [n, health(g.serviceS, g.prefill).get("a")!]));
          const s = snapshot({ providers, tickets, health: h });
          const base: PlanRequest = {
            candidates: [{ model: Q8, score: 80 }],
            promptTokens: 40_000,
            cannotWait: g.cannotWait,
          };
          const without = expected(by("time")(s, base));
          const withCache = expected(
            by("time")(s, { ...base, cachedPrefixes: g.cached.map((c) => ({ ...c, model: Q8 })) }),
          );
          if (without === undefined || withCache === undefined) return;
          expect(withCache).toBeLessThanOrEqual(without + 1e-9);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("time policy: the conversations a copy's slots hold", () => {
  // Each card has one slot; a's holds a live 16,000-token conversation of another agent.
  const seen = (over: Partial<ConversationSeen> = {}): ConversationSeen => ({
    provider: "a",
    model: Q8,
    key: "someone-elses-conversation",
    namespace: "crew",
    tokens: 16_000,
    atMs: T0 - 10_000,
    prefixes: [],
    ...over,
  });
  const fleet = (conversations: ConversationSeen[], engine?: "vllm") =>
    snapshot({
      providers: [warm("a"), warm("b")].map((p) => (engine ? { ...p, engine } : p)),
      health: health(12),
      conversations: indexConversations(conversations),
    });
  const fresh: PlanRequest = { candidates: [{ model: Q8, score: 80 }], promptTokens: 2_000 };

  it("are not pushed out when another copy is as good: the call costs its conversation a prefill there", () => {
    // Without records the copies tie and the name picks a.
    expect(by("time")(fleet([]), fresh)).toMatchObject({ kind: "claim", provider: "a" });
    const d = by("time")(fleet([seen()]), fresh);
    expect(d).toMatchObject({ kind: "claim", provider: "b" });
  });

  it("cost nothing to their own conversation, to a copy with a slot to spare, or once they are stale", () => {
    expect(
      by("time")(fleet([seen()]), { ...fresh, conversationKey: "someone-elses-conversation" }),
    ).toMatchObject({
      provider: "a",
    });
    expect(by("time")(fleet([seen({ atMs: T0 - 3_600_000 })]), fresh)).toMatchObject({ provider: "a" });
    const two = snapshot({
      providers: [
        provider("a", { totalVramMiB: RTX_4090_MIB, maxParallel: 2, loadedModelFootprintsMiB: { [Q8]: F8 } }),
        warm("b"),
      ],
      health: health(12),
      conversations: indexConversations([seen()]),
    });
    expect(by("time")(two, fresh)).toMatchObject({ provider: "a" });
  });

  it("are priced at the least recently used conversation's prefill", () => {
    // b holds one too, smaller and older: the call goes where it pushes out less.
    const d = by("time")(
      fleet([seen(), seen({ provider: "b", key: "other", tokens: 4_000, atMs: T0 - 60_000 })]),
      fresh,
    );
    expect(d).toMatchObject({ kind: "claim", provider: "b" });
    expect((d as { cost: number }).cost).toBeCloseTo(12 + 4_000 / PREFILL_TOKENS_PER_S, 6);
  });

  it("count only on engines that keep one prompt per slot", () => {
    expect(by("time")(fleet([seen()], "vllm"), fresh)).toMatchObject({ kind: "claim", provider: "a" });
  });

  it("cost nothing where the call's own last turn ran, before its own record is published", () => {
    // The conversation's turn 1 ran on a, after the other conversation's: a's slot holds it now,
    // and the next turn takes its own slot back. Its record comes only later (from its second
    // turn on, and through the watch), so the call's own cached prefix is what says so.
    const next: PlanRequest = { ...fresh, cachedPrefixes: [{ provider: "a", model: Q8, tokens: 1_000 }] };
    expect(by("time")(fleet([seen()]), next)).toMatchObject({ kind: "claim", provider: "a" });
  });
});

describe("time policy: a prefix held for another conversation of the crew", () => {
  const shared = (p: string): PlanRequest => ({
    ...call(0),
    cachedPrefixes: [{ provider: p, model: Q8, tokens: 18_000, shared: true }],
  });

  it("is priced where the engine shares one prefix cache among requests (vLLM)", () => {
    const vllm = snapshot({
      providers: [warm("a"), warm("b")].map((p) => ({ ...p, engine: "vllm" as const })),
      health: health(12),
    });
    expect(by("time")(vllm, call(0))).toMatchObject({ kind: "claim", provider: "a" });
    expect(by("time")(vllm, shared("b"))).toMatchObject({ kind: "claim", provider: "b" });
  });

  it("is not where the engine keeps one prompt per slot: taking it would push its conversation out", () => {
    const ollama = snapshot({ providers: [warm("a"), warm("b")], health: health(12) });
    expect(by("time")(ollama, shared("b"))).toMatchObject({ kind: "claim", provider: "a" });
  });
});
