// The three buckets and their settings (docs/rules/state.md §2). Names are Kubemoot's, so our sidecars
// can share a NATS cluster with its operator and runtime.
import type { BucketSettings } from "./kv.js";

export const PROVIDER_STATE_BUCKET = "kubemoot_provider_state";
export const PROVIDER_TICKETS_BUCKET = "kubemoot_provider_tickets";
export const MODEL_DEMAND_BUCKET = "kubemoot_model_demand";

/** All three, in a fixed order. */
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
  };
}
