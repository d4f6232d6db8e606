// The buckets and their settings (docs/rules/state.md §2). Names are Kubemoot's, so our sidecars
// can share a NATS cluster with its operator and runtime. Every StateStore opens the three of
// BUCKETS_OF; the discussion bindings bucket only whoever follows or writes it
// (discussion-bindings.ts), so it is not one of them.
import { DISCUSSION_BINDING_MAX_BYTES } from "./discussion-codec.js";
import type { BucketSettings } from "./kv.js";

export const PROVIDER_STATE_BUCKET = "kubemoot_provider_state";
export const PROVIDER_TICKETS_BUCKET = "kubemoot_provider_tickets";
export const MODEL_DEMAND_BUCKET = "kubemoot_model_demand";
/** Per-discussion bindings (docs/rules/state.md §2.5); not in BUCKETS_OF. */
export const DISCUSSION_BINDINGS_BUCKET = "kubemoot_discussion_bindings";

/** The three every StateStore opens, in a fixed order. */
export const BUCKETS_OF = [PROVIDER_STATE_BUCKET, PROVIDER_TICKETS_BUCKET, MODEL_DEMAND_BUCKET] as const;

const MINUTE_MS = 60_000;

/** Settings of each bucket; `replicas` is the NATS cluster replication (1, 3 or 5). */
export function bucketSettings(replicas = 1): Record<string, BucketSettings> {
  return {
    // History 1, no TTL: readers ignore entries whose lastProbedAt is older than 5 minutes.
    [PROVIDER_STATE_BUCKET]: { history: 1, ttlMs: 0, maxValueBytes: 0, replicas },
    // TTL 10 min: the unconditional reclaim of tickets whose holder died (no reaper).
    [PROVIDER_TICKETS_BUCKET]: { history: 1, ttlMs: 10 * MINUTE_MS, maxValueBytes: 4096, replicas },
    [MODEL_DEMAND_BUCKET]: { history: 1, ttlMs: 6 * 60 * MINUTE_MS, maxValueBytes: 4096, replicas },
    // TTL 30 min: an abandoned thread's bindings expire; the binder rewrites live ones at least
    // every 10 min (DISCUSSION_BINDING_REFRESH_MS), so a live one never does.
    [DISCUSSION_BINDINGS_BUCKET]: {
      history: 1,
      ttlMs: 30 * MINUTE_MS,
      maxValueBytes: DISCUSSION_BINDING_MAX_BYTES,
      replicas,
    },
  };
}
