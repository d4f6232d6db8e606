// Per-provider circuit breaker (docs/rules/placement.md §3): 3 failures within 120 s open the
// circuit for 60 s; a success closes it. Immutable state, pure transitions.
import { CIRCUIT_FAILURE_THRESHOLD, CIRCUIT_OPEN_MS, CIRCUIT_WINDOW_MS } from "./constants.js";

/** Circuit of one provider. */
export interface CircuitState {
  /** Epoch ms of the failures still inside the window, oldest first. */
  readonly failuresMs: readonly number[];
  /** Epoch ms until which the circuit is open; 0 when it was never opened or a success closed it. */
  readonly openUntilMs: number;
}

export interface CircuitOptions {
  threshold: number;
  windowMs: number;
  openMs: number;
}

export const DEFAULT_CIRCUIT_OPTIONS: CircuitOptions = {
  threshold: CIRCUIT_FAILURE_THRESHOLD,
  windowMs: CIRCUIT_WINDOW_MS,
  openMs: CIRCUIT_OPEN_MS,
};

export const CLOSED_CIRCUIT: CircuitState = Object.freeze({ failuresMs: Object.freeze([]), openUntilMs: 0 });

/** True while the circuit is open at `nowMs`. */
export function circuitOpen(state: CircuitState | undefined, nowMs: number): boolean {
  return state !== undefined && nowMs < state.openUntilMs;
}

/**
 * After a failure at `nowMs`. Failures older than the window are dropped; reaching the
 * threshold opens the circuit and clears the count, so after the open period it takes a
 * fresh run of failures to open it again (no half-open single-strike rule: the spec has none).
 */
export function recordFailure(
  state: CircuitState,
  nowMs: number,
  opts: CircuitOptions = DEFAULT_CIRCUIT_OPTIONS,
): CircuitState {
  const recent = state.failuresMs.filter((t) => nowMs - t < opts.windowMs && t <= nowMs);
  recent.push(nowMs);
  if (recent.length >= opts.threshold) {
    return { failuresMs: [], openUntilMs: Math.max(state.openUntilMs, nowMs + opts.openMs) };
  }
  return { failuresMs: recent, openUntilMs: state.openUntilMs };
}

/** After a success: the circuit closes and the failure count resets. */
export function recordSuccess(_state: CircuitState): CircuitState {
  return CLOSED_CIRCUIT;
}
