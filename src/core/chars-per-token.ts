// Chars-per-token ratio learned from the engine's reports (docs/rules/placement.md §3). Used to
// estimate prompt tokens when the engine has not told us: ceil(chars / ratio). Only reports
// long enough to measure count (short prompts are mostly template), weighted by their size.
import {
  CHARS_PER_TOKEN_DEFAULT,
  CHARS_PER_TOKEN_LEARN_RATE,
  CHARS_PER_TOKEN_MAX,
  CHARS_PER_TOKEN_MIN,
  CHARS_PER_TOKEN_MIN_SAMPLE_TOKENS,
  GENEROUS_RATIO_FACTOR,
} from "./constants.js";

export interface CharsPerToken {
  /** Current ratio (chars per token). */
  readonly ratio: number;
  /** Whether any valid report has been learned (the first one replaces the default). */
  readonly learned: boolean;
  /** Decayed sums of the reports learned from (chars and tokens); 0 before the first. */
  readonly chars: number;
  readonly tokens: number;
}

export const INITIAL_CHARS_PER_TOKEN: CharsPerToken = Object.freeze({
  ratio: CHARS_PER_TOKEN_DEFAULT,
  learned: false,
  chars: 0,
  tokens: 0,
});

/** Whether a report of `tokens` engine-counted prompt tokens for `chars` characters is learned from. */
export function learnable(chars: number, tokens: number): boolean {
  if (!(chars > 0) || !(tokens > 0) || !Number.isFinite(chars) || !Number.isFinite(tokens)) return false;
  if (tokens < CHARS_PER_TOKEN_MIN_SAMPLE_TOKENS) return false;
  const observed = chars / tokens;
  return observed >= CHARS_PER_TOKEN_MIN && observed <= CHARS_PER_TOKEN_MAX;
}

/**
 * After an engine report of `tokens` prompt tokens for a prompt of `chars` characters. Reports
 * that are not learnable (too short, or a ratio outside [1, 8]) are ignored; the first
 * learnable one replaces the default; later ones add to the decayed sums.
 */
export function learnCharsPerToken(state: CharsPerToken, chars: number, tokens: number): CharsPerToken {
  if (!learnable(chars, tokens)) return state;
  const keep = state.learned ? 1 - CHARS_PER_TOKEN_LEARN_RATE : 0;
  const c = state.chars * keep + chars;
  const t = state.tokens * keep + tokens;
  return { ratio: c / t, learned: true, chars: c, tokens: t };
}

/** Estimated tokens of `chars` characters: ceil(chars / ratio); 0 for none. */
export function estimateTokens(chars: number, state: CharsPerToken = INITIAL_CHARS_PER_TOKEN): number {
  if (!(chars > 0) || !Number.isFinite(chars)) return 0;
  const ratio = state.ratio > 0 ? state.ratio : CHARS_PER_TOKEN_DEFAULT;
  return Math.ceil(chars / ratio);
}

/**
 * A generous (low) count of `chars` characters: what the prompt could be at the most
 * favourable plausible ratio. A prompt is refused before sending only when even this does not
 * fit; between it and the estimate, the call is sent and the engine's own count judges it.
 */
export function generousTokens(chars: number, state: CharsPerToken = INITIAL_CHARS_PER_TOKEN): number {
  if (!(chars > 0) || !Number.isFinite(chars)) return 0;
  const base = Number.isFinite(state.ratio)
    ? Math.max(state.ratio, CHARS_PER_TOKEN_DEFAULT)
    : CHARS_PER_TOKEN_DEFAULT;
  return Math.ceil(chars / Math.min(CHARS_PER_TOKEN_MAX, base * GENEROUS_RATIO_FACTOR));
}

/** Prompt tokens of a call: the engine's count when known (> 0), else the estimate from chars. */
export function promptTokens(
  reportedTokens: number | undefined,
  chars: number,
  state: CharsPerToken = INITIAL_CHARS_PER_TOKEN,
): number {
  if (reportedTokens !== undefined && reportedTokens > 0 && Number.isFinite(reportedTokens)) {
    return Math.ceil(reportedTokens);
  }
  return estimateTokens(chars, state);
}
