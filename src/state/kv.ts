// The one key-value interface the state layer is written against (docs/rules/state.md §3).
// Two implementations pass the same contract suite: NATS JetStream KV
// (nats-kv.ts) and the embedded in-memory store (memory-kv.ts). Semantics are JetStream's:
// every write gets the next revision of its bucket (the stream sequence), a delete writes a
// tombstone (a revision of its own), and compare-and-set compares a key's last revision.

/** What happened to a key at a revision. */
export type KvOperation = "PUT" | "DEL" | "PURGE";

/** One stored revision of a key. */
export interface KvEntry {
  readonly bucket: string;
  readonly key: string;
  /** Raw value bytes (empty for DEL/PURGE). */
  readonly value: Uint8Array;
  /** Bucket-wide, strictly increasing across all keys of the bucket. */
  readonly revision: number;
  readonly operation: KvOperation;
  /** When the server stored it (epoch ms). */
  readonly createdMs: number;
}

/** Bucket limits. Sizes in bytes, times in ms; 0 means "no limit". */
export interface BucketSettings {
  /** Revisions kept per key (JetStream max_msgs_per_subject). */
  history: number;
  /** Age after which the server drops an entry silently (no watch event); 0 = never. */
  ttlMs: number;
  /** Largest value accepted; 0 = unlimited. */
  maxValueBytes: number;
  /** Copies kept by a NATS cluster (1, 3 or 5). Ignored by the in-memory store. */
  replicas: number;
}

export interface WatchOptions {
  /**
   * "initial": first the last revision of every key (tombstones included), then updates;
   * "updates": only writes after the watch started.
   */
  include: "initial" | "updates";
  /** NATS subject-style key filter (`*` one token, `>` the rest); default ">" (all keys). */
  key?: string;
}

/** A running watch: iterate its events in revision order; `stop()` ends the iteration. */
export interface KvWatch extends AsyncIterable<KvEntry> {
  stop(): void;
}

/** One bucket. Every failure is a KubemootError (StateUnavailable, StateConflict, ...). */
export interface KvBucket {
  readonly name: string;
  readonly settings: BucketSettings;
  /** The key's value, or null when absent or deleted. */
  get(key: string): Promise<KvEntry | null>;
  /** Writes unconditionally; returns the new revision. */
  put(key: string, value: Uint8Array): Promise<number>;
  /**
   * Create-if-absent: fails with StateExists when the key holds a value. A deleted key may
   * be created again (JetStream semantics).
   */
  create(key: string, value: Uint8Array): Promise<number>;
  /**
   * Compare-and-set: writes only if the key's last revision is `revision`, else StateConflict.
   * `revision` 0 means "never written": it fails even on a tombstone, so a deleted key is
   * never brought back by it.
   */
  update(key: string, value: Uint8Array, revision: number): Promise<number>;
  /** Writes a tombstone (returns its revision); with `revision`, only if the key's last revision is that one. */
  delete(key: string, options?: { revision?: number }): Promise<number>;
  /** Keys holding a value whose name starts with `prefix` (plain string prefix). */
  keys(prefix?: string): Promise<string[]>;
  watch(options: WatchOptions): Promise<KvWatch>;
  /**
   * The revision a watch with initial values must reach to have seen the bucket (or, with a
   * `filter` as a watch takes it, the keys it matches) as of this call: the newest stored
   * revision among them, or 0 when there is none.
   */
  headRevision(filter?: string): Promise<number>;
  /** The newest revision (a value or a tombstone) among the keys `filter` matches, or null. */
  last(filter: string): Promise<KvEntry | null>;
}

/** Connection state of a store, so readers can say "unavailable" instead of "empty". */
export interface KvConnection {
  readonly connected: boolean;
  /** Called with true on (re)connect, false on disconnect; returns an unsubscribe function. */
  onStatus(listener: (connected: boolean) => void): () => void;
}

/**
 * Plain publish/subscribe beside the buckets: sidecars publish their decision records on it and
 * the web view follows them (docs/web-view.md). At most once and without history, as core NATS
 * is: a message published while nobody listens, or while the connection is down, is gone. Two
 * implementations, like the KV: in process (message-bus.ts) and NATS (nats-message-bus.ts).
 */
export interface MessageBus {
  /** Publishes `data` on `subject` (NATS subject syntax); never throws, drops while disconnected. */
  publish(subject: string, data: Uint8Array): void;
  /**
   * Calls `onMessage` for every message on a subject `filter` matches (`*` one token, `>` the
   * rest), asynchronously; returns the unsubscribe function.
   */
  subscribe(filter: string, onMessage: (subject: string, data: Uint8Array) => void): () => void;
}

/** A connection that opens buckets (creating them with `settings` when they do not exist). */
export interface KvStore {
  readonly kind: "memory" | "nats";
  readonly connection: KvConnection;
  /** Plain publish/subscribe on the same connection (decision records). */
  readonly messages: MessageBus;
  bucket(name: string, settings: BucketSettings): Promise<KvBucket>;
  close(): Promise<void>;
}

/**
 * `b`, with every successful write's key and revision told to `note` (a copy's
 * read-your-writes, docs/rules/state.md §10); reads and watches pass through.
 */
export function noteWrites(b: KvBucket, note: (key: string, revision: number) => void): KvBucket {
  const told = (key: string, revision: number) => {
    note(key, revision);
    return revision;
  };
  return {
    name: b.name,
    settings: b.settings,
    get: (k) => b.get(k),
    put: async (k, v) => told(k, await b.put(k, v)),
    create: async (k, v) => told(k, await b.create(k, v)),
    update: async (k, v, r) => told(k, await b.update(k, v, r)),
    delete: async (k, o) => told(k, await b.delete(k, o)),
    keys: (p) => b.keys(p),
    watch: (o) => b.watch(o),
    headRevision: (f) => b.headRevision(f),
    last: (f) => b.last(f),
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** JSON → bytes, as every value in these buckets is stored. */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Bytes → parsed JSON; throws on malformed input. */
export function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(decoder.decode(bytes));
}

/** Whether `key` matches a NATS subject-style filter (`*` = one token, `>` = the rest). */
export function keyMatches(filter: string, key: string): boolean {
  if (filter === ">") return true;
  const f = filter.split(".");
  const k = key.split(".");
  for (let i = 0; i < f.length; i++) {
    const t = f[i];
    if (t === ">") return k.length > i;
    if (i >= k.length) return false;
    if (t !== "*" && t !== k[i]) return false;
  }
  return f.length === k.length;
}
