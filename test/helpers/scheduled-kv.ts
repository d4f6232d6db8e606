// A KV store whose every request and response is a scheduling point of fast-check's scheduler
// (once `gate.on` is set): property tests explore how racing claims interleave, reads, help
// writes, guard CASes, ticket writes and provider-state publishes alike.
import type fc from "fast-check";
import type { KvBucket, KvStore } from "../../src/state/index.js";

export function scheduledStore(inner: KvStore, s: fc.Scheduler, gate: { on: boolean }): KvStore {
  const wrapBucket = (b: KvBucket): KvBucket => {
    const hop = async <T>(label: string, f: () => Promise<T>): Promise<T> => {
      if (!gate.on) return f();
      await s.schedule(Promise.resolve(), `send ${label}`);
      let out: T;
      try {
        out = await f();
      } catch (err) {
        await s.schedule(Promise.resolve(), `fail ${label}`);
        throw err;
      }
      await s.schedule(Promise.resolve(), `recv ${label}`);
      return out;
    };
    return {
      name: b.name,
      settings: b.settings,
      get: (k) => hop(`get ${k}`, () => b.get(k)),
      put: (k, v) => hop(`put ${k}`, () => b.put(k, v)),
      create: (k, v) => hop(`create ${k}`, () => b.create(k, v)),
      update: (k, v, r) => hop(`update ${k}@${r}`, () => b.update(k, v, r)),
      delete: (k, o) => hop(`delete ${k}`, () => b.delete(k, o)),
      keys: (p) => hop("keys", () => b.keys(p)),
      watch: (o) => b.watch(o),
      headRevision: (f) => hop("head", () => b.headRevision(f)),
      last: (f) => hop(`last ${f}`, () => b.last(f)),
    };
  };
  return {
    kind: inner.kind,
    connection: inner.connection,
    messages: inner.messages,
    bucket: async (name, settings) => wrapBucket(await inner.bucket(name, settings)),
    close: () => inner.close(),
  };
}
