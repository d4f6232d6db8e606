// A real KV store whose buckets have some operations replaced: tests use it to make a real
// backend slow or failing in one place (late watch events, held or failing deletes) while
// every other operation goes through unchanged.
import type { KvBucket, KvStore } from "../../src/state/index.js";

/** `inner`, with each bucket's operations replaced by what `over` returns for it. */
export function wrapBuckets(inner: KvStore, over: (bucket: KvBucket) => Partial<KvBucket>): KvStore {
  return {
    kind: inner.kind,
    connection: inner.connection,
    messages: inner.messages,
    close: () => inner.close(),
    bucket: async (name, settings) => {
      const b = await inner.bucket(name, settings);
      return wrapBucket(b, over(b));
    },
  };
}

/** `b`, with the operations in `over` replaced and every other one passed through. */
export function wrapBucket(b: KvBucket, over: Partial<KvBucket>): KvBucket {
  return {
    name: b.name,
    settings: b.settings,
    get: (k) => b.get(k),
    put: (k, v) => b.put(k, v),
    create: (k, v) => b.create(k, v),
    update: (k, v, r) => b.update(k, v, r),
    delete: (k, o) => b.delete(k, o),
    keys: (p) => b.keys(p),
    watch: (o) => b.watch(o),
    headRevision: (f) => b.headRevision(f),
    last: (f) => b.last(f),
    ...over,
  };
}
