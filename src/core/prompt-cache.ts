// A prompt cache in expected seconds (docs/rules/placement.md §5.5): a copy that still holds
// part of this call's prompt (its conversation's last turn ran there) evaluates only the rest,
// so the call finishes sooner there by the prefill it skips. The sidecar says which copies hold
// how much (CachedPrefix); the rate is what this sidecar measured there, else a slow default.
// And a copy whose engine keeps one prompt per slot, all its slots holding live conversations
// (as the sidecars publish them, ConversationSeen), loses one of them to a call from elsewhere:
// that conversation's next turn prefills again, a cost the call puts on others.
import { CONVERSATION_LIVE_MS, PREFILL_TOKENS_PER_S } from "./constants.js";
import { copyKey, firstSince } from "./conversation-seen.js";
import { serviceS } from "./expected-time.js";
import { type ProviderView, type SnapshotIndex, slotsOf } from "./snapshot.js";

/** A copy holding part of this call's prompt in its prompt cache. */
export interface CachedPrefix {
  provider: string;
  model: string;
  /** Prompt tokens it holds. */
  tokens: number;
  /**
   * Held for another conversation (a crew's shared system prompt): counted only where the engine
   * shares one cache among its requests (vLLM's and SGLang's prefix caches). An engine that keeps
   * one prompt per slot would give the call that conversation's slot, and it would prefill again.
   */
  shared?: boolean;
}

/** Prompt tokens `model`'s copy on `provider` holds for this call; 0 when none. */
export function cachedTokensAt(prefixes: readonly CachedPrefix[], provider: string, model: string): number {
  let n = 0;
  for (const p of prefixes) {
    if (p.provider === provider && p.model === model && Number.isFinite(p.tokens)) n = Math.max(n, p.tokens);
  }
  return Math.max(0, n);
}

/** Prompt tokens per second of `model` from a provider's measured rates, else the default. */
export function prefillRate(byModel: ReadonlyMap<string, number> | undefined, model: string): number {
  const r = byModel?.get(model);
  return r !== undefined && Number.isFinite(r) && r > 0 ? r : PREFILL_TOKENS_PER_S;
}

/** Prompt tokens per second of `model` on `v`: measured there, else the default. */
export function prefillTokensPerS(v: ProviderView, model: string): number {
  return prefillRate(v.prefillByModel, model);
}

/**
 * Seconds of prefill the copy's cache saves this call: its cached tokens at the copy's prefill
 * rate, never more than a call takes there (s).
 */
export function cacheSavingS(
  ix: SnapshotIndex,
  v: ProviderView,
  model: string,
  prefixes: readonly CachedPrefix[],
): number {
  if (prefixes.length === 0) return 0;
  const tokens = usableTokensAt(v, model, prefixes);
  if (tokens <= 0) return 0;
  return Math.min(serviceS(ix, v, model), tokens / prefillTokensPerS(v, model));
}

/** Whether the provider's engine keeps one prompt per slot (Ollama, llama.cpp's server). */
function perSlot(v: ProviderView): boolean {
  return !v.fixed || v.state.engine === "llamacpp";
}

/**
 * Tokens of the call's prompt the copy holds for it: on an engine that keeps one prompt per slot,
 * only its own conversation's (a shared prefix there sits in another conversation's slot).
 */
function usableTokensAt(v: ProviderView, model: string, prefixes: readonly CachedPrefix[]): number {
  return cachedTokensAt(perSlot(v) ? prefixes.filter((p) => p.shared !== true) : prefixes, v.name, model);
}

/**
 * Seconds of prefill a call of conversation `own` puts on another conversation by taking a slot
 * of `model`'s copy on `v`: with an engine that keeps one prompt per slot (Ollama, llama.cpp)
 * and at least as many live conversations there as slots, not counting `own`, which returns to
 * its own slot, the engine gives the call the least recently used one, whose conversation
 * prefills its prompt again at its next turn. 0 otherwise, and 0 where the call's own prefix is
 * cached (`cached`, not a shared one): its last turn ran there after the others, so its slot is
 * the one it takes back, whether or not its own record has been published yet.
 */
export function displacementS(
  ix: SnapshotIndex,
  v: ProviderView,
  model: string,
  own: string | undefined,
  cached: readonly CachedPrefix[],
): number {
  if (!perSlot(v)) return 0;
  const c = ix.conversations.copies.get(copyKey(v.name, model));
  if (c === undefined || usableTokensAt(v, model, cached) > 0) return 0;
  const since = ix.nowMs - CONVERSATION_LIVE_MS;
  const mine = own !== undefined ? c.byKey.get(own) : undefined;
  if (mine !== undefined && mine.atMs >= since) return 0;
  const first = firstSince(c.byTime, since);
  if (c.byTime.length - first < slotsOf(v, model)) return 0;
  const lru = c.byTime[first];
  // Its prefill, not this call's: not bounded by what a call takes here.
  return lru === undefined ? 0 : lru.tokens / prefillTokensPerS(v, model);
}
