// A guarded claim is granted only once its ticket is in the bucket (docs/rules/state.md §6,
// step 5): a write that fails while NATS is away is retried within the claim, and a claim whose
// ticket cannot be written is answered StateUnavailable, never granted unseen.
import { afterEach, describe, expect, it } from "vitest";
import { wrapBuckets } from "../../test/helpers/kv-wrap.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { PROVIDER_TICKETS_BUCKET } from "./buckets.js";
import { decodeJson, type KvStore } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { openStateStore, type StateStore } from "./store.js";
import { keyLayout } from "./ticket-keys.js";

const keys = keyLayout("scoped");
const stores: StateStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/** The store, with the first `failures` writes of ticket keys failing as if NATS were away. */
function failingTicketWrites(
  inner: KvStore,
  failures: number,
): { kv: KvStore; attempts: () => number; heal: () => void } {
  let attempts = 0;
  const kv = wrapBuckets(inner, (b) => ({
    update: async (k, v, r) => {
      if (b.name === PROVIDER_TICKETS_BUCKET && keys.parse(k).kind === "ticket") {
        attempts++;
        if (attempts <= failures) throw new KubemootError(ErrorCode.StateUnavailable, "test: NATS is away");
      }
      return b.update(k, v, r);
    },
  }));
  return {
    kv,
    attempts: () => attempts,
    heal: () => {
      failures = 0;
    },
  };
}

async function setup(failures: number) {
  const inner = new MemoryKvStore();
  const { kv, attempts, heal } = failingTicketWrites(inner, failures);
  const store = await openStateStore(kv, { holderId: "test" });
  stores.push(store);
  const bucket = await inner.bucket(PROVIDER_TICKETS_BUCKET, {
    history: 1,
    ttlMs: 600_000,
    maxValueBytes: 4096,
    replicas: 1,
  });
  await store.providerWriter.publish(providerState("rig1", { totalVramMiB: 24563 }));
  return { store, bucket, attempts, heal };
}

describe("writing a won ticket", () => {
  it("grants after a retried write, with the ticket in the bucket when the grant answers", async () => {
    const { store, bucket, attempts } = await setup(2);
    const a = await store.tickets.claim({ provider: "rig1", model: "qwen3:14b", modelFootprintMiB: 12224 });
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    expect(attempts()).toBe(3);
    const raw = await bucket.get(a.key);
    expect(raw).not.toBeNull();
    expect((decodeJson(raw!.value) as { ticketId: string }).ticketId).toBe(a.ticket.ticketId);
  });

  it("answers StateUnavailable when the ticket cannot be written, and leaves no ticket behind", async () => {
    const { store, bucket, attempts, heal } = await setup(Number.POSITIVE_INFINITY);
    const err = await store.tickets
      .claim({ provider: "rig1", model: "qwen3:14b", modelFootprintMiB: 12224 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(KubemootError.is(err, ErrorCode.StateUnavailable)).toBe(true);
    expect(attempts()).toBeGreaterThan(1);
    const left = (await bucket.keys()).filter((k) => keys.parse(k).kind === "ticket");
    for (const k of left) expect(await bucket.get(k)).toBeNull();
    // Its tombstone ends it in every copy, so its room is free again at once.
    heal();
    const b = await store.tickets.claim({ provider: "rig1", model: "qwen3:32b", modelFootprintMiB: 12000 });
    expect(b.ok).toBe(true);
  }, 30_000);
});
