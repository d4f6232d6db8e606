// Chars-per-token ratio learned from the engine's reports (docs/rules/placement.md §3). Used to
// estimate prompt tokens when the engine has not told us: ceil(chars / ratio).
import {
  CHARS_PER_TOKEN_DEFAULT,
  CHARS_PER_TOKEN_LEARN_RATE,
  CHARS_PER_TOKEN_MAX,
  CHARS_PER_TOKEN_MIN,
} from "./constants.js";

export interface CharsPerToken {
  /** Current ratio (chars per token). */
  readonly ratio: number;
  /** Whether any valid report has been learned (the first one replaces the default). */
  readonly learned: boolean;
}

export const INITIAL_CHARS_PER_TOKEN: CharsPerToken = Object.freeze({
  ratio: CHARS_PER_TOKEN_DEFAULT,
  learned: false,
});

/**
 * After an engine report of `tokens` prompt tokens for a prompt of `chars` characters.
 * Reports with no tokens or chars, or a ratio outside [1, 8], are ignored.
 */
export function learnCharsPerToken(state: CharsPerToken, chars: number, tokens: number): CharsPerToken {
  if (!(chars > 0) || !(tokens > 0) || !Number.isFinite(chars) || !Number.isFinite(tokens)) return state;
  const observed = chars / tokens;
  if (observed < CHARS_PER_TOKEN_MIN || observed > CHARS_PER_TOKEN_MAX) return state;
  if (!state.learned) return { ratio: observed, learned: true };
  return { ratio: state.ratio + CHARS_PER_TOKEN_LEARN_RATE * (observed - state.ratio), learned: true };
}

/** Estimated tokens of `chars` characters: ceil(chars / ratio); 0 for none. */
export function estimateTokens(chars: number, state: CharsPerToken = INITIAL_CHARS_PER_TOKEN): number {
  if (!(chars > 0) || !Number.isFinite(chars)) return 0;
  const ratio = state.ratio > 0 ? state.ratio : CHARS_PER_TOKEN_DEFAULT;
  return Math.ceil(chars / ratio);
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
