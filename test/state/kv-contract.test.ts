// The KV contract: one suite, run against the in-memory store and real nats-servers (plain, a
// JetStream domain reached from a leaf node, and another account's JetStream under an API
// prefix). Every implementation must agree on revisions, CAS, tombstones, prefix scans,
// watches, TTL and how they fail when the backend is away.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { BucketSettings, KvBucket, KvEntry, KvStore, KvWatch } from "../../src/state/kv.js";
import { decodeJson, encodeJson } from "../../src/state/kv.js";
import { MemoryKvStore } from "../../src/state/memory-kv.js";
import { connectNatsKv, type NatsKvOptions } from "../../src/state/nats-kv.js";
import { NatsServer, startNatsImportedJetStream, startNatsLeafDomains } from "../helpers/nats-server.js";

interface Harness {
  store: KvStore;
  /** Makes the backend unreachable, then reachable again. */
  offline(): Promise<void>;
  online(): Promise<void>;
  dispose(): Promise<void>;
}

const harnesses: Record<string, () => Promise<Harness>> = {
  memory: async () => {
    const store = new MemoryKvStore();
    return {
      store,
      offline: async () => store.setOnline(false),
      online: async () => store.setOnline(true),
      dispose: () => store.close(),
    };
  },
  nats: async () => {
    const server = await NatsServer.start();
    return natsHarness(server, {}, () => server.dispose());
  },
  "nats, JetStream domain": async () => {
    const domains = await startNatsLeafDomains();
    return natsHarness(
      domains.leaf,
      { domain: domains.domain },
      () => domains.dispose(),
      () => domains.hub.waitLeafNodes(1),
    );
  },
  "nats, API prefix": async () => {
    const imported = await startNatsImportedJetStream();
    const { apiPrefix, inboxPrefix } = imported;
    return natsHarness(imported.server, { apiPrefix, inboxPrefix }, () => imported.dispose());
  },
};

/** A NATS store on `server` (the one clients connect to), offline = that server stopped. */
async function natsHarness(
  server: NatsServer,
  options: Omit<NatsKvOptions, "servers">,
  dispose: () => Promise<void>,
  linked: () => Promise<void> = async () => undefined,
): Promise<Harness> {
  const store = await connectNatsKv({ ...options, servers: server.url, reconnectWaitMs: 100 });
  return {
    store,
    offline: () => server.stop(),
    online: async () => {
      await server.restart();
      await until(() => store.connection.connected, 10_000);
      await linked();
    },
    dispose: async () => {
      await store.close();
      await dispose();
    },
  };
}

const SETTINGS: BucketSettings = { history: 1, ttlMs: 0, maxValueBytes: 4096, replicas: 1 };
const bytes = (s: string) => new TextEncoder().encode(s);
const text = (e: KvEntry | null) => (e === null ? null : new TextDecoder().decode(e.value));

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `expected ${code}`).not.toBeNull();
  expect(KubemootError.is(err, code as never), `got ${String(err)}`).toBe(true);
}

/** Collects watch events until `count` arrived (or the timeout passed). */
async function collect(w: KvWatch, count: number, timeoutMs = 3000): Promise<KvEntry[]> {
  const out: KvEntry[] = [];
  const it = w[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  while (out.length < count) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const r = await Promise.race([it.next(), new Promise<null>((res) => setTimeout(() => res(null), left))]);
    if (r === null || r.done) break;
    out.push(r.value);
  }
  return out;
}

for (const [name, make] of Object.entries(harnesses)) {
  describe(`KV contract: ${name}`, () => {
    let h: Harness;
    let n = 0;
    const fresh = (settings: Partial<BucketSettings> = {}): Promise<KvBucket> =>
      h.store.bucket(`contract_${name.replace(/\W+/g, "_")}_${++n}`, { ...SETTINGS, ...settings });

    beforeAll(async () => {
      h = await make();
    });
    afterAll(async () => {
      await h?.dispose();
    });

    it("get of an absent key is null; put returns bucket-wide increasing revisions", async () => {
      const b = await fresh();
      expect(await b.get("a")).toBeNull();
      const r1 = await b.put("a", bytes("1"));
      const r2 = await b.put("b", bytes("2"));
      const r3 = await b.put("a", bytes("3"));
      expect(r2).toBe(r1 + 1);
      expect(r3).toBe(r2 + 1);
      const e = await b.get("a");
      expect(text(e)).toBe("3");
      expect(e?.revision).toBe(r3);
      expect(e?.operation).toBe("PUT");
      expect(e?.key).toBe("a");
      expect(e?.createdMs).toBeGreaterThan(Date.now() - 60_000);
    });

    it("create is create-if-absent; a deleted key may be created again", async () => {
      const b = await fresh();
      const r1 = await b.create("k", bytes("x"));
      await expectCode(b.create("k", bytes("y")), ErrorCode.StateExists);
      expect(text(await b.get("k"))).toBe("x");
      await b.delete("k");
      const r2 = await b.create("k", bytes("z"));
      expect(r2).toBeGreaterThan(r1);
      expect(text(await b.get("k"))).toBe("z");
    });

    it("update is compare-and-set on the key's last revision", async () => {
      const b = await fresh();
      const r1 = await b.put("k", bytes("1"));
      const r2 = await b.update("k", bytes("2"), r1);
      expect(r2).toBeGreaterThan(r1);
      await expectCode(b.update("k", bytes("stale"), r1), ErrorCode.StateConflict);
      expect(text(await b.get("k"))).toBe("2");
      // Another key's write does not disturb this key's CAS.
      await b.put("other", bytes("o"));
      const r3 = await b.update("k", bytes("3"), r2);
      expect(text(await b.get("k"))).toBe("3");
      expect(r3).toBeGreaterThan(r2);
    });

    it("update at revision 0 succeeds only on a never-written key, never on a tombstone", async () => {
      const b = await fresh();
      await b.update("never", bytes("n"), 0);
      expect(text(await b.get("never"))).toBe("n");
      await expectCode(b.update("never", bytes("again"), 0), ErrorCode.StateConflict);
      await b.put("gone", bytes("g"));
      await b.delete("gone");
      await expectCode(b.update("gone", bytes("back"), 0), ErrorCode.StateConflict);
      expect(await b.get("gone")).toBeNull();
      // A tombstone of a key that never held a value also blocks it.
      await b.delete("released-before-written");
      await expectCode(b.update("released-before-written", bytes("x"), 0), ErrorCode.StateConflict);
    });

    it("delete writes a tombstone; delete at a revision is compare-and-set", async () => {
      const b = await fresh();
      const r1 = await b.put("k", bytes("1"));
      await b.put("k", bytes("2"));
      await expectCode(b.delete("k", { revision: r1 }), ErrorCode.StateConflict);
      expect(text(await b.get("k"))).toBe("2");
      const cur = await b.get("k");
      const tomb = await b.delete("k", { revision: cur!.revision });
      expect(await b.get("k")).toBeNull();
      expect(tomb).toBeGreaterThan(cur!.revision);
      expect(await b.headRevision()).toBe(tomb);
    });

    it("keys by prefix match the exact string prefix and skip deleted keys", async () => {
      const b = await fresh();
      await b.put("ollama-gpu__t1", bytes("{}"));
      await b.put("ollama-gpu__t2", bytes("{}"));
      await b.put("ollama-gpu-extended__x", bytes("{}"));
      await b.put("residency__ollama-gpu__m", bytes("{}"));
      await b.put("wait.m.a", bytes("{}"));
      await b.put("wait.m.b", bytes("{}"));
      await b.put("intent.m.a", bytes("{}"));
      await b.delete("ollama-gpu__t2");
      expect((await b.keys("ollama-gpu__")).sort()).toEqual(["ollama-gpu__t1"]);
      expect((await b.keys("wait.")).sort()).toEqual(["wait.m.a", "wait.m.b"]);
      expect((await b.keys()).length).toBe(6);
      expect(await b.keys("nothing")).toEqual([]);
    });

    it("a watch for updates sees later writes and deletes in revision order, not earlier ones", async () => {
      const b = await fresh();
      await b.put("before", bytes("0"));
      const w = await b.watch({ include: "updates" });
      const r1 = await b.put("a", bytes("1"));
      await b.delete("before");
      const r3 = await b.create("b", bytes("3"));
      const got = await collect(w, 3);
      w.stop();
      expect(got.map((e) => [e.key, e.operation])).toEqual([
        ["a", "PUT"],
        ["before", "DEL"],
        ["b", "PUT"],
      ]);
      expect(got[0]!.revision).toBe(r1);
      expect(got[2]!.revision).toBe(r3);
      expect(decodeJson(got[2]!.value)).toBe(3);
    });

    it("a watch always delivers a key's last revision; one replaced before delivery may be skipped", async () => {
      // History 1 keeps one revision per key: a watch that lags sees the newest only.
      const b = await fresh();
      const w = await b.watch({ include: "updates" });
      await b.put("x", bytes("1"));
      await b.put("x", bytes("2"));
      const last = await b.delete("x");
      const r = await b.put("y", bytes("3"));
      const got = await collect(w, 5, 1000);
      w.stop();
      const revs = got.map((e) => e.revision);
      expect(revs).toEqual([...revs].sort((p, q) => p - q));
      expect(got.filter((e) => e.key === "x").at(-1)).toMatchObject({ revision: last, operation: "DEL" });
      expect(got.at(-1)).toMatchObject({ key: "y", revision: r });
    });

    it("a watch with initial values replays the last revision of each key, tombstones included", async () => {
      const b = await fresh();
      await b.put("x", bytes("1"));
      await b.put("x", bytes("2"));
      await b.put("y", bytes("3"));
      await b.delete("y");
      const head = await b.headRevision();
      const w = await b.watch({ include: "initial" });
      await b.put("z", bytes("4"));
      const got = await collect(w, 3);
      w.stop();
      expect(got.map((e) => [e.key, e.operation])).toEqual([
        ["x", "PUT"],
        ["y", "DEL"],
        ["z", "PUT"],
      ]);
      expect(text(got[0]!)).toBe("2");
      expect(got[1]!.revision).toBe(head);
      expect(got[2]!.revision).toBe(head + 1);
    });

    it("a watch can be filtered by a subject-style key", async () => {
      const b = await fresh();
      const w = await b.watch({ include: "updates", key: "wait.>" });
      await b.put("intent.m.a", encodeJson({ kind: "intent" }));
      await b.put("wait.m.a", encodeJson({ kind: "wait" }));
      const got = await collect(w, 1);
      await b.put("wait.m.b", encodeJson({ kind: "wait" }));
      got.push(...(await collect(w, 1)));
      w.stop();
      expect(got.map((e) => e.key)).toEqual(["wait.m.a", "wait.m.b"]);
    });

    it("headRevision is 0 for an empty bucket and the newest revision otherwise", async () => {
      const b = await fresh();
      expect(await b.headRevision()).toBe(0);
      await b.put("a", bytes("1"));
      const r = await b.put("b", bytes("2"));
      expect(await b.headRevision()).toBe(r);
    });

    it("headRevision with a filter is the newest revision of a matching key, tombstones included", async () => {
      const b = await fresh();
      expect(await b.headRevision("t.p1.>")).toBe(0);
      const r1 = await b.put("t.p1.ns.a", bytes("1"));
      await b.put("t.p2.ns.b", bytes("2"));
      expect(await b.headRevision("t.p1.>")).toBe(r1);
      await b.put("g.p2.claim", bytes("3"));
      const d = await b.delete("t.p1.ns.a");
      const other = await b.put("t.p10.ns.c", bytes("4"));
      expect(await b.headRevision("*.p1.>")).toBe(d);
      expect(await b.headRevision("*.p2.>")).toBe(d - 1);
      expect(await b.headRevision("*.p3.>")).toBe(0);
      expect(await b.headRevision()).toBe(other);
    });

    it("a filtered watch with initial values replays only the matching keys, then their updates", async () => {
      const b = await fresh();
      await b.put("t.p1.ns.a", bytes("1"));
      await b.put("t.p2.ns.b", bytes("2"));
      await b.put("g.p1.claim", bytes("3"));
      await b.delete("t.p1.ns.a");
      const w = await b.watch({ include: "initial", key: "*.p1.>" });
      await b.put("t.p2.ns.c", bytes("4"));
      await b.put("r.p1.m", bytes("5"));
      const got = await collect(w, 3);
      w.stop();
      expect(got.map((e) => [e.key, e.operation])).toEqual([
        ["g.p1.claim", "PUT"],
        ["t.p1.ns.a", "DEL"],
        ["r.p1.m", "PUT"],
      ]);
    });

    it("a watch for updates misses no key's last write made while it is being set up, many at once", async () => {
      // Writers run while 8 watches start: each must end up with the last revision of every
      // key written after its watch() resolved, in revision order (a watch whose deliveries
      // start before it listens drops them, and a key written once is then never seen).
      const b = await fresh();
      let stop = false;
      const written: { key: string; rev: number }[] = [];
      const writer = (async () => {
        for (let i = 0; !stop && i < 5000; i++) {
          const key = `k.${i}`; // each key written once: nothing supersedes it
          written.push({ key, rev: await b.put(key, bytes(String(i))) });
          // The in-memory store answers in a microtask: let timers and the watches run.
          if (i % 4 === 0) await new Promise((r) => setImmediate(r));
        }
      })();
      const watches = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const w = await b.watch({ include: "updates" });
          return { w, after: written.length };
        }),
      );
      await new Promise((r) => setTimeout(r, 200));
      stop = true;
      await writer;
      for (const { w, after } of watches) {
        const want = written.slice(after).map((x) => x.rev);
        const got = await collect(w, want.length + 8, 1500);
        w.stop();
        const revs = got.map((e) => e.revision);
        expect(revs).toEqual([...revs].sort((p, q) => p - q));
        // Every write acknowledged after watch() resolved is delivered.
        const seen = new Set(revs);
        expect(want.filter((r) => !seen.has(r))).toEqual([]);
      }
    });

    it("rejects values over the bucket's maximum and invalid keys", async () => {
      const b = await fresh({ maxValueBytes: 64 });
      await expectCode(b.put("k", new Uint8Array(65)), ErrorCode.InvalidArgument);
      await b.put("k", new Uint8Array(64));
      await expectCode(b.put("bad key", bytes("x")), ErrorCode.InvalidArgument);
      await expectCode(b.put("qwen3:8b", bytes("x")), ErrorCode.InvalidArgument);
    });

    it("drops entries older than the bucket TTL", async () => {
      const b = await fresh({ ttlMs: 1000 });
      await b.put("short", bytes("1"));
      expect(text(await b.get("short"))).toBe("1");
      const deadline = Date.now() + 5000;
      while ((await b.get("short")) !== null && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await b.get("short")).toBeNull();
      expect(await b.keys()).toEqual([]);
    });

    it("the message bus delivers to matching subscribers only, at most once, and not after unsubscribe", async () => {
      const got: string[] = [];
      const all: string[] = [];
      const un = h.store.messages.subscribe("kubemoot.decisions.*", (subject, data) => {
        got.push(`${subject} ${new TextDecoder().decode(data)}`);
      });
      const unAll = h.store.messages.subscribe("kubemoot.>", (subject) => {
        all.push(subject);
      });
      // Let NATS register the interest before publishing (a flush round trip).
      await new Promise((r) => setTimeout(r, 100));
      h.store.messages.publish("kubemoot.decisions.crew-a", bytes("one"));
      h.store.messages.publish("kubemoot.decisions.crew-a.deep", bytes("deeper"));
      h.store.messages.publish("other.subject", bytes("not for us"));
      await until(() => all.length >= 2, 3000);
      expect(got).toEqual(["kubemoot.decisions.crew-a one"]);
      expect(all.sort()).toEqual(["kubemoot.decisions.crew-a", "kubemoot.decisions.crew-a.deep"]);
      un();
      await new Promise((r) => setTimeout(r, 100));
      h.store.messages.publish("kubemoot.decisions.crew-b", bytes("two"));
      await until(() => all.length >= 3, 3000);
      expect(got).toHaveLength(1);
      unAll();
    });

    it("while the backend is away, operations fail fast with StateUnavailable, and recover", async () => {
      const b = await fresh();
      await b.put("k", bytes("1"));
      const w = await b.watch({ include: "updates" });
      const ended = (async () => {
        for await (const _ of w) {
          // drain until the watch ends
        }
        return true;
      })();
      await h.offline();
      await until(() => !h.store.connection.connected, 5000);
      const t0 = Date.now();
      await expectCode(b.get("k"), ErrorCode.StateUnavailable);
      await expectCode(b.put("k", bytes("2")), ErrorCode.StateUnavailable);
      await expectCode(b.keys(), ErrorCode.StateUnavailable);
      await expectCode(b.headRevision(), ErrorCode.StateUnavailable);
      expect(Date.now() - t0).toBeLessThan(1000);
      await h.online();
      expect(text(await b.get("k"))).toBe("1");
      await b.put("k", bytes("3"));
      expect(text(await b.get("k"))).toBe("3");
      w.stop();
      expect(await ended).toBe(true);
    });
  });
}
