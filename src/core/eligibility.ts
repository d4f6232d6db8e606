// Which providers a decision may use at all (docs/rules/placement.md §3, docs/rules/state.md): skipped
// when not ready, when their circuit is open, or when their state is older than 5 minutes.
import { type CircuitState, circuitOpen } from "./circuit-breaker.js";
import { PROVIDER_STALE_MS } from "./constants.js";
import { parseIsoMs } from "./iso-time.js";
import type { ProviderState } from "./shapes.js";

/** Why a provider cannot be used now. */
export type IneligibleReason = "stale" | "not-ready" | "circuit-open";

/**
 * Whether a provider's state is older than `staleMs` at `nowMs`. An empty or unparsable
 * `lastProbedAt` is kept (never stale), and so is a timestamp in the future.
 */
export function isStale(
  lastProbedAt: string | undefined,
  nowMs: number,
  staleMs = PROVIDER_STALE_MS,
): boolean {
  if (typeof lastProbedAt !== "string" || lastProbedAt.trim() === "") return false;
  const t = parseIsoMs(lastProbedAt);
  if (Number.isNaN(t)) return false;
  return nowMs - t > staleMs;
}

/** The reason a provider is skipped, or undefined when it is eligible. Stale is checked first. */
export function ineligibility(
  state: ProviderState,
  circuit: CircuitState | undefined,
  nowMs: number,
  staleMs = PROVIDER_STALE_MS,
): IneligibleReason | undefined {
  if (isStale(state.lastProbedAt, nowMs, staleMs)) return "stale";
  if (state.ready !== true) return "not-ready";
  if (circuitOpen(circuit, nowMs)) return "circuit-open";
  return undefined;
}
