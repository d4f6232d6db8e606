// kubemoot_discussion_bindings (docs/rules/state.md §2.5) against both KV implementations, as the
// KV contract runs (kv-contract.test.ts): the in-memory store and a real nats-server. A binding
// the binder publishes reaches every reader's copy through its watch; a removal takes it away; a
// value that is not a binding (put straight into the bucket by anyone) is skipped; the bucket has
// its TTL and the copy forgets what outlived it; the copy stays bounded and survives the store
// going away and coming back.
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  bucketSettings,
  connectNatsKv,
  DISCUSSION_BINDINGS_BUCKET,
  type DiscussionBinding,
  type DiscussionBindingEvent,
  DiscussionBindings,
  encodeDiscussionBinding,
  type KvStore,
  MemoryKvStore,
} from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { waitUntil } from "../helpers/wait-until.js";

interface Harness {
  store: KvStore;
  /** The bucket's limits as the backend holds them. */
  limits(): Promise<{ history: number; ttlMs: number; maxValueBytes: number }>;
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
      limits: async () =>
        (await store.bucket(DISCUSSION_BINDINGS_BUCKET, bucketSettings()[DISCUSSION_BINDINGS_BUCKET]!))
          .settings,
      offline: async () => store.setOnline(false),
      online: async () => store.setOnline(true),
      dispose: () => store.close(),
    };
  },
  nats: async () => {
    const server = await NatsServer.start();
    const store = await connectNatsKv({ servers: server.url, reconnectWaitMs: 100 });
    let nc: NatsConnection | undefined;
    return {
      store,
      // What the server was told, read back from the stream (max_age in ns).
      limits: async () => {
        nc ??= await connect({ servers: server.url });
        const cfg = (await (await jetstreamManager(nc)).streams.info(`KV_${DISCUSSION_BINDINGS_BUCKET}`))
          .config;
        return {
          history: cfg.max_msgs_per_subject,
          ttlMs: cfg.max_age / 1e6,
          maxValueBytes: cfg.max_msg_size,
        };
      },
      offline: () => server.stop(),
      online: async () => {
        await server.restart();
        await waitUntil(() => store.connection.connected, 10_000, "reconnected");
      },
      dispose: async () => {
        await nc?.close();
        await store.close();
        await server.dispose();
      },
    };
  },
};

let serial = 0;
/** A binding of a new thread (ids unique across the file: the bucket is shared by the tests). */
function binding(over: Partial<DiscussionBinding> = {}): DiscussionBinding {
  return {
    v: 1,
    kind: "binding",
    thread: `thread-${++serial}`,
    phase: "mulling",
    agent: "crew/alice",
    model: "qwen3:14b",
    provider: "gpu-b",
    endpoint: "http://ollama.gpu-b:11434",
    engine: "ollama",
    score: 80,
    candidates: [
      { model: "qwen3:14b", score: 80 },
      { model: "llama3:8b", score: 40 },
    ],
    reason: "bound",
    revision: 1,
    boundAt: new Date().toISOString(),
    ...over,
  };
}

for (const [name, make] of Object.entries(harnesses)) {
  describe(`discussion bindings: ${name}`, () => {
    let h: Harness;
    let opened: DiscussionBindings[] = [];
    let warnings: { obj: Record<string, unknown>; msg: string }[] = [];
    const logger = {
      warn: (obj: object, msg?: string) => warnings.push({ obj: obj as never, msg: msg ?? "" }),
    };

    /** A reader (or the binder's handle) on the harness' store, closed after the test. */
    async function open(options: Parameters<typeof DiscussionBindings.open>[2] = {}) {
      const b = await DiscussionBindings.open(h.store, 1, { logger, ...options });
      opened.push(b);
      await b.ready;
      return b;
    }

    beforeAll(async () => {
      h = await make();
    });
    afterEach(() => {
      for (const b of opened) b.close();
      opened = [];
      warnings = [];
    });
    afterAll(async () => {
      await h?.dispose();
    });

    it("creates the bucket with history 1, a 30-minute TTL and 8 KiB values", async () => {
      await open();
      expect(await h.limits()).toMatchObject({ history: 1, ttlMs: 30 * 60_000, maxValueBytes: 8192 });
    });

    it("publish: every reader's get has the binding once its watch delivers it", async () => {
      const binder = await open();
      const reader = await open();
      const events: DiscussionBindingEvent[] = [];
      reader.onChange((ev) => events.push(ev));
      const b = binding();
      const triage = {
        ...b,
        phase: "triage" as const,
        model: "llama3:8b",
        reason: "triage on the small one",
      };
      const rev = await binder.publish(b);
      await binder.publish(triage);
      await waitUntil(() => reader.get(b.thread, "triage") !== undefined, 5000, "the watch delivered");
      expect(reader.get(b.thread, "mulling")).toEqual(b);
      expect(reader.get(b.thread, "triage")).toEqual(triage);
      expect(events[0]).toEqual({ type: "put", key: `${b.thread}.mulling`, binding: b, revision: rev });
      expect(reader.available).toBe(true);
      // A reader opened later has it from its snapshot, as soon as it is ready.
      const late = await open();
      expect(late.get(b.thread, "mulling")).toEqual(b);
      // A new revision replaces the binding.
      const rebound = {
        ...b,
        provider: "gpu-c",
        revision: 2,
        reason: "rebound: provider gpu-c is better by 40 points",
      };
      await binder.publish(rebound);
      await waitUntil(() => reader.get(b.thread, "mulling")?.revision === 2, 5000, "the rebinding delivered");
      expect(reader.get(b.thread, "mulling")).toEqual(rebound);
    });

    it("remove: one phase, then both; gone from every copy", async () => {
      const binder = await open();
      const reader = await open();
      const b = binding();
      await binder.publish(b);
      await binder.publish({ ...b, phase: "triage" });
      await waitUntil(() => reader.get(b.thread, "triage") !== undefined, 5000, "published");
      const events: DiscussionBindingEvent[] = [];
      reader.onChange((ev) => events.push(ev));
      await binder.remove(b.thread, "mulling");
      await waitUntil(() => reader.get(b.thread, "mulling") === undefined, 5000, "mulling removed");
      expect(reader.get(b.thread, "triage")?.phase).toBe("triage");
      await binder.remove(b.thread);
      await waitUntil(() => reader.get(b.thread, "triage") === undefined, 5000, "both removed");
      expect(events.map((e) => (e.type === "delete" ? `${e.thread}.${e.phase}` : e.type))).toEqual([
        `${b.thread}.mulling`,
        `${b.thread}.triage`,
      ]);
    });

    it("skips a value put straight into the bucket that is not a binding, with a warning", async () => {
      const reader = await open();
      const raw = await h.store.bucket(
        DISCUSSION_BINDINGS_BUCKET,
        bucketSettings()[DISCUSSION_BINDINGS_BUCKET]!,
      );
      const bytes = (s: string) => new TextEncoder().encode(s);
      const held = binding();
      await raw.put(`${held.thread}.mulling`, encodeDiscussionBinding(held));
      await waitUntil(() => reader.get(held.thread, "mulling") !== undefined, 5000, "a real binding");
      const other = binding();
      await raw.put(`${other.thread}.mulling`, bytes("not json"));
      await raw.put(`${other.thread}.triage`, bytes(JSON.stringify({ ...other, phase: "triage", v: 2 })));
      await raw.put(`${held.thread}.triage`, encodeDiscussionBinding(other)); // names another thread
      await raw.put("hello.world", bytes('{"hello":1}'));
      await raw.put(`${held.thread}.mulling`, bytes('{"v":1}')); // overwrites a binding with junk
      const last = binding();
      await raw.put(`${last.thread}.mulling`, encodeDiscussionBinding(last));
      // Watches deliver in revision order: once the last write is in, so are the foreign ones.
      await waitUntil(() => reader.get(last.thread, "mulling") !== undefined, 5000, "the last write");
      expect(reader.get(other.thread, "mulling")).toBeUndefined();
      expect(reader.get(other.thread, "triage")).toBeUndefined();
      expect(reader.get(held.thread, "triage")).toBeUndefined();
      expect(reader.get(held.thread, "mulling")).toBeUndefined();
      const skipped = warnings
        .filter((w) => w.msg.includes("not a binding"))
        .map((w) => `${w.obj.key}: ${w.obj.reason}`);
      expect(skipped).toEqual([
        `${other.thread}.mulling: value is not JSON`,
        `${other.thread}.triage: v: must be 1, got 2`,
        `${held.thread}.triage: value names ${other.thread}.mulling, not its key ${held.thread}.triage`,
        'hello.world: key "hello.world" is not <threadId>.<phase>',
        `${held.thread}.mulling: kind: must be "binding" or "unschedulable"`,
      ]);
    });

    it("hides a binding past the bucket's TTL, as the server drops it without telling watches", async () => {
      let offsetMs = 0;
      const binder = await open();
      const reader = await open({ now: () => Date.now() + offsetMs });
      const b = binding({ kind: "unschedulable", model: undefined, candidates: [], reason: "no model fits" });
      await binder.publish(b);
      await waitUntil(() => reader.get(b.thread, "mulling") !== undefined, 5000, "published");
      offsetMs = 30 * 60_000 - 5_000;
      expect(reader.get(b.thread, "mulling")?.kind).toBe("unschedulable");
      offsetMs = 30 * 60_000 + 1_000;
      expect(reader.get(b.thread, "mulling")).toBeUndefined();
    });

    it("holds at most maxEntries bindings, leaving out new keys with one warning", async () => {
      const binder = await open();
      const base = binder.size;
      const reader = await open({ maxEntries: base + 2 });
      const [a, b, c, d] = [binding(), binding(), binding(), binding()];
      for (const x of [a, b, c, d]) await binder.publish(x);
      await binder.publish({ ...a, revision: 2 }); // an update of a held key still lands
      await waitUntil(() => reader.get(a.thread, "mulling")?.revision === 2, 5000, "the update");
      expect(reader.size).toBe(base + 2);
      expect([b, c, d].map((x) => reader.get(x.thread, "mulling") !== undefined)).toEqual([
        true,
        false,
        false,
      ]);
      expect(reader.dropped).toBe(2);
      expect(warnings.filter((w) => w.msg.includes("copy full"))).toHaveLength(1);
    });

    it("keeps answering while the store is away, and rebuilds its copy when it is back", async () => {
      const binder = await open();
      const reader = await open();
      const b = binding();
      await binder.publish(b);
      await waitUntil(() => reader.get(b.thread, "mulling") !== undefined, 5000, "published");
      const resets: string[] = [];
      reader.onChange((ev) => resets.push(ev.type));
      await h.offline();
      await waitUntil(() => !reader.available, 5000, "unavailable");
      expect(reader.get(b.thread, "mulling")).toEqual(b);
      await h.online();
      await waitUntil(() => reader.available && binder.available, 20_000, "available again");
      expect(resets).toContain("reset");
      const after = binding();
      await binder.publish(after);
      await binder.remove(b.thread);
      await waitUntil(() => reader.get(b.thread, "mulling") === undefined, 5000, "the watch follows again");
      expect(reader.get(after.thread, "mulling")).toEqual(after);
    });

    it("refuses bad ids and values before writing, naming the field", async () => {
      const binder = await open();
      await expect(binder.publish(binding({ thread: "a.b" }))).rejects.toMatchObject({ field: "thread" });
      await expect(binder.remove("a b")).rejects.toMatchObject({ field: "threadId" });
      expect(() => binder.get("x", "voting" as never)).toThrow(/phase: must be one of "mulling", "triage"/);
      binder.close();
      await expect(binder.publish(binding())).rejects.toThrow(/closed/);
    });
  });
}
