// Defaults of the state layer (spec/state.md, spec/placement.md §6–§8), each named once.
// The sidecar maps KUBEMOOT_* variables onto the matching options.
import { ErrorCode, KubemootError } from "../errors/index.js";

/** Decisions read state at most this old (ms). */
export const FRESH_READ_MS = 200;
/** Provider state whose lastProbedAt is older than this is ignored (ms). */
export const PROVIDER_STALE_MS = 5 * 60_000;
/** Ticket lease: call timeout 120 s + 30 s (KUBEMOOT_TICKET_LEASE_SECONDS overrides). */
export const TICKET_LEASE_MS = 150_000;
/**
 * Claims treat a ticket as gone only this long after its expiresAt, so that a Renew sent
 * before the expiry lands before anyone spends the room (ms).
 */
export const LEASE_GRACE_MS = 1000;
/** Claim attempts (each a compare-and-set on the provider's guard) before giving up. */
export const CLAIM_MAX_ATTEMPTS = 64;
/** Demand entry lifetimes (ms). */
export const WAIT_TTL_MS = 10 * 60_000;
export const INTENT_TTL_MS = 3 * 60_000;
export const RATE_TTL_MS = 6 * 60 * 60_000;

/**
 * The ticket lease from KUBEMOOT_TICKET_LEASE_SECONDS (ms), or undefined when unset. Throws
 * InvalidConfig on a value that is not a positive number of seconds.
 */
export function ticketLeaseFromEnv(
  env: Record<string, string | undefined> = process.env,
): number | undefined {
  const raw = env.KUBEMOOT_TICKET_LEASE_SECONDS;
  if (raw === undefined || raw.trim() === "") return undefined;
  const s = Number(raw);
  if (!Number.isFinite(s) || s <= 0) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `KUBEMOOT_TICKET_LEASE_SECONDS: "${raw}" is not a positive number of seconds`,
      { field: "KUBEMOOT_TICKET_LEASE_SECONDS" },
    );
  }
  return Math.round(s * 1000);
}
