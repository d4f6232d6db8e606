// Success rate of (provider, model) calls (docs/rules/placement.md §4): an EMA with weight 0.3 on
// the newest outcome that counts only after 5 samples; before that it reads 1.0 so a new
// provider is not punished for one early failure.
import { SUCCESS_RATE_EMA_WEIGHT, SUCCESS_RATE_MIN_SAMPLES } from "./constants.js";

export interface SuccessRate {
  /** Outcomes seen so far. */
  readonly samples: number;
  /** EMA of outcomes (1 = success, 0 = failure); seeded by the first outcome. */
  readonly ema: number;
}

export const NO_SUCCESS_SAMPLES: SuccessRate = Object.freeze({ samples: 0, ema: 1 });

/** After one more outcome. */
export function recordOutcome(
  state: SuccessRate,
  success: boolean,
  weight = SUCCESS_RATE_EMA_WEIGHT,
): SuccessRate {
  const x = success ? 1 : 0;
  const ema = state.samples === 0 ? x : state.ema + weight * (x - state.ema);
  return { samples: state.samples + 1, ema };
}

/** The rate the cost uses: the EMA after enough samples, else 1.0. */
export function successRateValue(
  state: SuccessRate | undefined,
  minSamples = SUCCESS_RATE_MIN_SAMPLES,
): number {
  if (state === undefined || state.samples < minSamples) return 1;
  return Math.min(1, Math.max(0, state.ema));
}
