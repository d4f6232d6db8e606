import { afterEach, describe, expect, it } from "vitest";
import { wrapBucket } from "../../test/helpers/kv-wrap.js";
import { ManualClock } from "../../test/helpers/state-fixtures.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import type { KvBucket, KvEntry, KvWatch } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { BucketMirror } from "./mirror.js";

const text = (e: KvEntry) => new TextDecoder().decode(e.value);
const bytes = (s: string) => new TextEncoder().encode(s);
const mirrors: BucketMirror<unknown>[] = [];
afterEach(() => {
  for (const m of mirrors.splice(0)) m.close();
});

async function setup(ttlMs = 0, wrap?: (b: KvBucket) => KvBucket) {
  const clock = new ManualClock();
  const kv = new MemoryKvStore({ now: clock.now });
  const raw = await kv.bucket("m", { history: 1, ttlMs, maxValueBytes: 0, replicas: 1 });
  const bucket = wrap === undefined ? raw : wrap(raw);
  const mirror = new BucketMirror<string>({
    bucket,
    connection: kv.connection,
    decode: text,
    group: (k) => k.split(".")[0],
    now: clock.now,
    catchUpTimeoutMs: 300,
  });
  mirrors.push(mirror as BucketMirror<unknown>);
  return { clock, kv, raw, mirror };
}

describe("bucket mirror", () => {
  it("starts from a snapshot, follows writes, remembers tombstones, indexes groups", async () => {
    const { raw, mirror } = await setup();
    await raw.put("a.1", bytes("one"));
    await raw.put("b.1", bytes("two"));
    await mirror.start();
    expect(mirror.get("a.1")?.value).toBe("one");
    await raw.put("a.2", bytes("three"));
    await raw.delete("b.1");
    await mirror.fresh();
    expect([...mirror.group("a")].map((e) => e.value).sort()).toEqual(["one", "three"]);
    expect(mirror.get("b.1")).toBeUndefined();
    expect(mirror.seen("b.1")).toMatchObject({ deleted: true });
    expect(mirror.seen("never")).toBeUndefined();
    expect(mirror.revision).toBe(await raw.headRevision());
  });

  it("reads its own writes made through tracked()", async () => {
    const { mirror } = await setup();
    await mirror.start();
    const rw = mirror.tracked();
    for (let i = 0; i < 20; i++) {
      await rw.put(`k.${i}`, bytes(String(i)));
      await mirror.fresh();
      expect(mirror.get(`k.${i}`)?.value).toBe(String(i));
    }
  });

  it("hides entries older than the bucket TTL (the server drops them without an event)", async () => {
    const { clock, raw, mirror } = await setup(60_000);
    await raw.put("t.1", bytes("x"));
    await mirror.start();
    expect(mirror.get("t.1")?.value).toBe("x");
    clock.advance(60_001);
    expect(mirror.get("t.1")).toBeUndefined();
    expect([...mirror.entries()]).toEqual([]);
  });

  it("answers knows / holdsLive / shownDeleted as seen() does, TTL included", async () => {
    const { clock, raw, mirror } = await setup(60_000);
    await raw.put("a.1", bytes("one"));
    await raw.put("a.2", bytes("two"));
    await mirror.start();
    await raw.delete("a.2");
    await mirror.fresh();
    clock.advance(30_000);
    await raw.put("a.3", bytes("three"));
    await mirror.fresh();
    clock.advance(30_001); // a.1 is past the TTL now, a.3 is not
    for (const key of ["a.1", "a.2", "a.3", "never"]) {
      const seen = mirror.seen(key);
      expect({ key, knows: mirror.knows(key) }).toEqual({ key, knows: seen !== undefined });
      expect({ key, live: mirror.holdsLive(key) }).toEqual({ key, live: seen?.deleted === false });
      expect({ key, gone: mirror.shownDeleted(key) }).toEqual({ key, gone: seen?.deleted === true });
    }
    expect([mirror.shownDeleted("a.1"), mirror.shownDeleted("a.2"), mirror.holdsLive("a.3")]).toEqual([
      true,
      true,
      true,
    ]);
  });

  it("fails fast while disconnected and rebuilds itself from a snapshot afterwards", async () => {
    const { kv, raw, mirror } = await setup();
    await raw.put("a.1", bytes("one"));
    await mirror.start();
    kv.setOnline(false);
    await expect(mirror.fresh()).rejects.toSatisfy((e) => KubemootError.is(e, ErrorCode.StateUnavailable));
    expect(mirror.available).toBe(false);
    kv.setOnline(true);
    await raw.delete("a.1");
    await raw.put("a.2", bytes("two"));
    await mirror.fresh();
    expect(mirror.available).toBe(true);
    expect(mirror.get("a.1")).toBeUndefined();
    expect(mirror.get("a.2")?.value).toBe("two");
  });

  it("a read waiting for the copy to come back fails at once when the connection drops", async () => {
    // The watch ends while the client still counts itself connected (NATS reports the drop a
    // moment later) and the new watch cannot start: a read then waits for the copy. The drop
    // must end that wait, not the catch-up timeout (here longer than the test's own limit).
    let watches = 0;
    const secondHangs = (b: KvBucket): KvBucket =>
      wrapBucket(b, {
        watch: (o) => (++watches > 1 ? new Promise<KvWatch>(() => undefined) : b.watch(o)),
      });
    const clock = new ManualClock();
    const kv = new MemoryKvStore({ now: clock.now });
    const raw = await kv.bucket("m", { history: 1, ttlMs: 0, maxValueBytes: 0, replicas: 1 });
    const mirror = new BucketMirror<string>({
      bucket: secondHangs(raw),
      connection: kv.connection,
      decode: text,
      now: clock.now,
      catchUpTimeoutMs: 60_000,
    });
    mirrors.push(mirror as BucketMirror<unknown>);
    await mirror.start();
    (raw as unknown as { endWatches(): void }).endWatches();
    while (watches < 2) await new Promise((r) => setTimeout(r, 5));
    const read = mirror.fresh();
    kv.setOnline(false);
    await expect(read).rejects.toSatisfy((e) => KubemootError.is(e, ErrorCode.StateUnavailable));
  });

  it("rebuilds a watch that stopped delivering (a silently dead consumer)", async () => {
    let watches = 0;
    const stallFirst = (b: KvBucket): KvBucket =>
      wrapBucket(b, {
        watch: async (o): Promise<KvWatch> => {
          const w = await b.watch(o);
          if (++watches > 1) return w;
          // The first watch delivers its snapshot, then nothing more.
          let head = await b.headRevision();
          const it = w[Symbol.asyncIterator]();
          return {
            stop: () => w.stop(),
            [Symbol.asyncIterator]: () => ({
              next: async () => {
                const r = await it.next();
                if (!r.done && r.value.revision > head) {
                  head = Number.POSITIVE_INFINITY;
                  return new Promise<IteratorResult<KvEntry>>(() => undefined); // stalls forever
                }
                return r;
              },
            }),
          };
        },
      });
    const { raw, mirror } = await setup(0, stallFirst);
    await raw.put("a.1", bytes("one"));
    await mirror.start();
    await raw.put("a.2", bytes("two"));
    await new Promise((r) => setTimeout(r, 250)); // let the copy age past 200 ms
    await expect(mirror.fresh()).rejects.toSatisfy((e) => KubemootError.is(e, ErrorCode.StateUnavailable));
    await mirror.fresh();
    expect(mirror.get("a.2")?.value).toBe("two");
    expect(watches).toBe(2);
  });
});
