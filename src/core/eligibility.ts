// Which providers a decision may use at all (docs/rules/placement.md §3, docs/rules/state.md): skipped
// when not ready, when their circuit is open, when their state is older than 5 minutes, or when a
// sidecar found them unreachable after their last probe.
import { type CircuitState, circuitOpen } from "./circuit-breaker.js";
import { PROVIDER_STALE_MS } from "./constants.js";
import { parseIsoMs } from "./iso-time.js";
import type { ProviderState } from "./shapes.js";

/** Why a provider cannot be used now. */
export type IneligibleReason = "stale" | "not-ready" | "circuit-open" | "unreachable";

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

/**
 * The reason a provider is skipped, or undefined when it is eligible. Stale is checked first.
 * `suspectSinceMs`: when a sidecar last saw a connection to it refused or reset; that counts
 * until a probe newer than it says otherwise (an unparsable probe time never clears it).
 */
export function ineligibility(
  state: ProviderState,
  circuit: CircuitState | undefined,
  nowMs: number,
  staleMs = PROVIDER_STALE_MS,
  suspectSinceMs?: number,
): IneligibleReason | undefined {
  if (isStale(state.lastProbedAt, nowMs, staleMs)) return "stale";
  if (state.ready !== true) return "not-ready";
  if (suspectSinceMs !== undefined && !probedAfter(state.lastProbedAt, suspectSinceMs)) return "unreachable";
  if (circuitOpen(circuit, nowMs)) return "circuit-open";
  return undefined;
}

function probedAfter(lastProbedAt: string | undefined, ms: number): boolean {
  if (typeof lastProbedAt !== "string") return false;
  const t = parseIsoMs(lastProbedAt);
  return !Number.isNaN(t) && t > ms;
}
