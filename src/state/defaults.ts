// Defaults only the state layer uses, each named once. Those core (or the simulator) uses too —
// the fresh-read bound, provider staleness, demand entry lifetimes, the ticket lease — live in
// src/core/constants.ts, which state imports and core never the other way round.
// The sidecar maps its settings (src/settings) onto the matching options.

/**
 * Claims treat a ticket as gone only this long after its expiresAt, so that a Renew sent
 * before the expiry lands before anyone spends the room (ms).
 */
export const LEASE_GRACE_MS = 1000;
/** Claim attempts (each a compare-and-set on the provider's guard) before giving up. */
export const CLAIM_MAX_ATTEMPTS = 64;
/**
 * How long the tickets copy keeps the tombstone of a released ticket that no guard lists any
 * more (ms); the bucket's TTL still bounds every other tombstone (docs/rules/state.md §10).
 */
export const TICKET_TOMBSTONE_KEEP_MS = 10_000;
/** How long a read waits for a bucket's copy to catch up or come back (ms). */
export const CATCH_UP_TIMEOUT_MS = 2000;
