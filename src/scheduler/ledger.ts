// The call ledger: what this sidecar remembers of the calls it placed (for Release, Renew and
// Attribute) and what finished calls teach it (each provider's health, the chars-per-token
// ratio). The rules themselves are core's call policy; this only keeps their state.
import {
  type CharsPerToken,
  estimateTokens,
  generousTokens,
  INITIAL_CHARS_PER_TOKEN,
  judgeTruncation,
  learnCharsPerToken,
  learnFromCall,
  type ProviderHealth,
  prefillRate,
} from "../core/index.js";
import type { CachedChars, ConversationRef } from "./conversations.js";
import type { AttributionOut, PlacementOut, ReleaseInput } from "./types.js";

/** A prompt's estimated tokens and the generous (low) count a refusal is decided on. */
export interface PromptEstimate {
  tokens: number;
  generous: number;
}

/** What the ledger holds of one call. */
export interface CallEntry extends AttributionOut {
  /** The engine's load time within the call (ms), as reported at Release. */
  loadMs: number;
  released: boolean;
  staticFallback: boolean;
  footprintMiB: number;
  expiresAtMs: number;
  /** The conversation the call is a turn of (docs/rules/placement.md §5.5), recorded on success. */
  conversation?: ConversationRef | undefined;
  /** Its key as the sidecars publish it (conversation-records.ts). */
  conversationKey?: string;
  /** The crew charged for the call, and the tokens charged at admission (docs/rules/fairness.md §4). */
  fairCrew?: string;
  fairCharged?: number;
}

/**
 * Calls remembered for Attribute (the oldest released ones are forgotten first): an agent asks
 * about a call it has just made, and this covers over half an hour of a busy agent calling
 * every second. The bound is what keeps the records' memory from growing with the calls.
 */
export const DEFAULT_ATTRIBUTION_CAPACITY = 2048;

export class CallLedger {
  private readonly entries = new Map<string, CallEntry>();
  /** Per conversation id, its latest placed turn until that turn is released. */
  private readonly turnsInFlight = new Map<string, CallEntry>();
  /** Per provider, learned from the calls this sidecar made there. */
  readonly health = new Map<string, ProviderHealth>();
  /** Providers this sidecar found unreachable, with when (epoch ms). */
  readonly suspects = new Map<string, number>();
  private ratio: CharsPerToken = INITIAL_CHARS_PER_TOKEN;

  constructor(
    private readonly now: () => number,
    private readonly capacity = DEFAULT_ATTRIBUTION_CAPACITY,
  ) {}

  get charsPerToken(): CharsPerToken {
    return this.ratio;
  }

  /** Prompt tokens for a call: the caller's count, else chars over the learned ratio. */
  estimatePromptTokens(promptTokens: number, promptChars: number): number {
    return promptTokens > 0 ? promptTokens : estimateTokens(promptChars, this.ratio);
  }

  /** The estimate and its generous (low) count; a caller's own count is exact, so both. */
  promptEstimate(promptTokens: number, promptChars: number): PromptEstimate {
    if (promptTokens > 0) return { tokens: promptTokens, generous: promptTokens };
    return {
      tokens: estimateTokens(promptChars, this.ratio),
      generous: generousTokens(promptChars, this.ratio),
    };
  }

  /** Calls placed and not released yet (held plans included). */
  get active(): number {
    let n = 0;
    for (const e of this.entries.values()) if (!e.released) n++;
    return n;
  }

  get(ticketId: string): CallEntry | undefined {
    return this.entries.get(ticketId);
  }

  /**
   * A placed turn of a conversation (placement.md §5.5): recorded in the conversation table at
   * Release when it succeeds, and until then the conversation's latest turn in flight.
   */
  noteTurn(ticketId: string, conversation: ConversationRef, key: string | undefined, expected: number): void {
    const e = this.entries.get(ticketId);
    if (!e) return;
    e.conversation = conversation;
    if (key !== undefined) e.conversationKey = key;
    e.expectedCachedPromptTokens = expected;
    this.turnsInFlight.set(conversation.id, e);
  }

  /**
   * What the copy of the conversation's turn in flight will hold for its next turn: that turn's
   * prompt, once it runs. A client that sends its next turn on the last byte of the answer is
   * placed before that turn's Release records it; without this, the next turn would be priced
   * on the turn before.
   */
  inFlightCached(ref: ConversationRef | undefined): CachedChars | undefined {
    const e = ref ? this.turnsInFlight.get(ref.id) : undefined;
    const prev = e?.conversation;
    if (!ref || !e || !prev || e.released || !e.provider || ref.promptChars < prev.promptChars)
      return undefined;
    return { provider: e.provider, model: e.model, chars: prev.promptChars };
  }

  /** Entries still holding a ticket in the shared state (not released, not static). */
  unreleased(): CallEntry[] {
    return [...this.entries.values()].filter((e) => !e.released && !e.staticFallback);
  }

  remember(p: PlacementOut, agent: string, tokens: number, queueWaitMs: number): void {
    this.entries.set(p.ticketId, {
      ticketId: p.ticketId,
      provider: p.provider,
      endpoint: p.endpoint,
      model: p.model,
      agent,
      evicted: p.evicted,
      coldLoad: p.coldLoad,
      queueWaitMs,
      placedAtMs: this.now(),
      releasedAtMs: 0,
      latencyMs: 0,
      estimatedPromptTokens: tokens,
      promptTokens: 0,
      cachedPromptTokens: 0,
      expectedCachedPromptTokens: p.expectedCachedTokens,
      prefillSavedMs: 0,
      truncated: false,
      success: false,
      outcome: "unspecified",
      error: "",
      fromPlan: p.fromPlan,
      engine: p.engine,
      priority: p.priority ?? "",
      queuePosition: p.queuePosition ?? 0,
      bindingRevision: p.bindingRevision ?? 0,
      loadMs: 0,
      released: false,
      staticFallback: p.staticFallback,
      footprintMiB: p.footprintMiB,
      expiresAtMs: p.expiresAtMs,
    });
  }

  /** Marks an entry released without an outcome (a dropped plan, shutdown). */
  drop(e: CallEntry, why: string): void {
    this.endTurn(e);
    e.released = true;
    e.releasedAtMs = this.now();
    e.error = why;
  }

  /**
   * Records a call's outcome on its entry and learns from it (unless it never ran). Returns
   * the entry, or undefined when it is unknown or was released already.
   */
  finish(input: ReleaseInput): CallEntry | undefined {
    const e = this.entries.get(input.ticketId);
    if (!e || e.released) return undefined;
    this.endTurn(e);
    e.released = true;
    e.releasedAtMs = this.now();
    e.outcome = input.outcome;
    e.success = input.outcome === "succeeded";
    e.error = input.error;
    e.latencyMs = input.latencyMs;
    e.promptTokens = input.promptTokens;
    e.cachedPromptTokens = Math.min(
      input.cachedPromptTokens ?? 0,
      input.promptTokens || Number.POSITIVE_INFINITY,
    );
    e.truncated = judgeTruncation({
      promptChars: input.promptChars,
      reportedTokens: input.promptTokens,
      contextSent: input.contextSent,
      ratio: this.ratio,
    });
    if (input.providerUnreachable === true && e.provider) this.suspects.set(e.provider, this.now());
    if (input.ran !== false) this.learn(e, input);
    // Priced after learning, so this call's own prefill rate counts.
    if (e.cachedPromptTokens > 0 && e.provider) {
      const rate = prefillRate(this.health.get(e.provider)?.prefillByModel, e.model);
      e.prefillSavedMs = (e.cachedPromptTokens / rate) * 1000;
    }
    e.loadMs = input.loadMs ?? 0;
    this.trim();
    return e;
  }

  private endTurn(e: CallEntry): void {
    if (e.conversation && this.turnsInFlight.get(e.conversation.id) === e)
      this.turnsInFlight.delete(e.conversation.id);
  }

  attribution(ticketId: string): AttributionOut | undefined {
    const e = this.entries.get(ticketId);
    return e ? publicEntry(e) : undefined;
  }

  private learn(e: CallEntry, input: ReleaseInput): void {
    // A cut prompt's count says nothing about the ratio of the prompt that was sent.
    if (!e.truncated && input.promptChars > 0 && input.promptTokens > 0) {
      this.ratio = learnCharsPerToken(this.ratio, input.promptChars, input.promptTokens);
    }
    if (e.staticFallback || !e.provider) return;
    this.health.set(
      e.provider,
      learnFromCall(
        this.health.get(e.provider),
        {
          model: e.model,
          outcome: input.outcome,
          latencyMs: input.latencyMs,
          loadMs: input.loadMs ?? 0,
          footprintMiB: e.footprintMiB,
          coldLoad: e.coldLoad,
          promptTokens: input.promptTokens,
          cachedTokens: e.cachedPromptTokens,
          promptEvalMs: input.promptEvalMs ?? 0,
        },
        this.now(),
      ),
    );
  }

  private trim(): void {
    if (this.entries.size <= this.capacity) return;
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.capacity) break;
      if (e.released) this.entries.delete(id);
    }
  }
}

export function publicEntry(e: CallEntry): AttributionOut {
  return {
    ticketId: e.ticketId,
    provider: e.provider,
    endpoint: e.endpoint,
    model: e.model,
    agent: e.agent,
    evicted: e.evicted,
    coldLoad: e.coldLoad,
    queueWaitMs: e.queueWaitMs,
    placedAtMs: e.placedAtMs,
    releasedAtMs: e.releasedAtMs,
    latencyMs: e.latencyMs,
    estimatedPromptTokens: e.estimatedPromptTokens,
    promptTokens: e.promptTokens,
    cachedPromptTokens: e.cachedPromptTokens,
    expectedCachedPromptTokens: e.expectedCachedPromptTokens,
    prefillSavedMs: e.prefillSavedMs,
    truncated: e.truncated,
    success: e.success,
    outcome: e.outcome,
    error: e.error,
    fromPlan: e.fromPlan,
    engine: e.engine,
    priority: e.priority,
    queuePosition: e.queuePosition,
    bindingRevision: e.bindingRevision,
  };
}
