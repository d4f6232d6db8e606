// The buckets of a contention run: the tickets bucket created first keeping 64 revisions per key
// (the claim code does not depend on it), so that the referee reads every revision — a ticket
// key gets two (write, delete), so only keys written more than 64 times (the claim guards,
// which carry no budget) can lose any — and the provider states published.
import type { ProviderState } from "../../../src/core/shapes.js";
import { bucketSettings, PROVIDER_TICKETS_BUCKET } from "../../../src/state/buckets.js";
import type { KvBucket } from "../../../src/state/kv.js";
import { connectNatsKv } from "../../../src/state/nats-kv.js";
import { openStateStore } from "../../../src/state/store.js";

/** Revisions per key the referee needs kept. */
const REFEREE_HISTORY = 64;

export interface ContentionBuckets {
  /** The tickets bucket, on a connection of its own (e.g. for raw KV latency). */
  tickets: KvBucket;
  close(): Promise<void>;
}

export async function prepareBuckets(
  servers: string | string[],
  states: readonly ProviderState[],
  replicas = 1,
): Promise<ContentionBuckets> {
  const kv = await connectNatsKv({ servers });
  const tickets = await kv.bucket(PROVIDER_TICKETS_BUCKET, {
    ...bucketSettings(replicas)[PROVIDER_TICKETS_BUCKET]!,
    history: REFEREE_HISTORY,
  });
  const store = await openStateStore(servers, { replicas });
  for (const s of states) await store.providerWriter.publish(s);
  return {
    tickets,
    close: async () => {
      await store.close();
      await kv.close();
    },
  };
}
