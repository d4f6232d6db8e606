// A prompt cache in expected seconds (docs/rules/placement.md §5.5): a copy that still holds
// part of this call's prompt (its conversation's last turn ran there) evaluates only the rest,
// so the call finishes sooner there by the prefill it skips. The sidecar says which copies hold
// how much (CachedPrefix); the rate is what this sidecar measured there, else a slow default.
import { PREFILL_TOKENS_PER_S } from "./constants.js";
import { serviceS } from "./expected-time.js";
import type { ProviderView, SnapshotIndex } from "./snapshot.js";

/** A copy holding part of this call's prompt in its prompt cache. */
export interface CachedPrefix {
  provider: string;
  model: string;
  /** Prompt tokens it holds. */
  tokens: number;
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
  const tokens = cachedTokensAt(prefixes, v.name, model);
  if (tokens <= 0) return 0;
  return Math.min(serviceS(ix, v, model), tokens / prefillTokensPerS(v, model));
}
