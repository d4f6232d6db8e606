// The embedded in-memory KV store (the default with no NATS configured). Same semantics as
// JetStream KV, checked by the shared contract suite: a per-bucket revision counter like the
// stream sequence, tombstones for deletes, compare-and-set on a key's last revision, TTL
// removal without watch events, and watches with or without initial values.
import { AsyncQueue } from "./async-queue.js";
import type {
  BucketSettings,
  KvBucket,
  KvConnection,
  KvEntry,
  KvOperation,
  KvStore,
  KvWatch,
  WatchOptions,
} from "./kv.js";
import { keyMatches } from "./kv.js";
import {
  invalidKey,
  stateConflict,
  stateExists,
  stateUnavailable,
  validKey,
  valueTooLarge,
} from "./kv-errors.js";
import { MemoryMessageBus } from "./message-bus.js";

export interface MemoryKvOptions {
  /** Clock for entry timestamps and TTL (epoch ms); default Date.now. */
  now?: () => number;
}

class MemoryConnection implements KvConnection {
  connected = true;
  private readonly listeners = new Set<(connected: boolean) => void>();

  onStatus(listener: (connected: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  set(connected: boolean): void {
    if (this.connected === connected) return;
    this.connected = connected;
    for (const l of [...this.listeners]) l(connected);
  }
}

export class MemoryKvStore implements KvStore {
  readonly kind = "memory" as const;
  readonly connection = new MemoryConnection();
  readonly messages = new MemoryMessageBus(() => this.connection.connected);
  private readonly buckets = new Map<string, MemoryBucket>();
  private readonly now: () => number;

  constructor(options: MemoryKvOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  async bucket(name: string, settings: BucketSettings): Promise<KvBucket> {
    this.assertOnline();
    let b = this.buckets.get(name);
    if (b === undefined) {
      b = new MemoryBucket(name, settings, this.now, () => this.assertOnline());
      this.buckets.set(name, b);
    }
    return b;
  }

  /**
   * Simulates losing and regaining the backend (tests): while offline every operation fails
   * with StateUnavailable and running watches end, as they do when NATS goes away.
   */
  setOnline(online: boolean): void {
    if (!online) for (const b of this.buckets.values()) b.endWatches();
    this.connection.set(online);
  }

  async close(): Promise<void> {
    for (const b of this.buckets.values()) b.endWatches();
  }

  private assertOnline(): void {
    if (!this.connection.connected) throw stateUnavailable("the in-memory store is offline");
  }
}

interface Watcher {
  filter: string;
  queue: AsyncQueue<KvEntry>;
}

const NO_VALUE = new Uint8Array(0);

class MemoryBucket implements KvBucket {
  /** Last entry per key, tombstones included; Map order = write order = revision order. */
  private readonly entries = new Map<string, KvEntry>();
  private readonly watchers = new Set<Watcher>();
  private seq = 0;

  constructor(
    readonly name: string,
    readonly settings: BucketSettings,
    private readonly now: () => number,
    private readonly assertOnline: () => void,
  ) {}

  async get(key: string): Promise<KvEntry | null> {
    this.begin(key);
    const e = this.entries.get(key);
    return e !== undefined && e.operation === "PUT" ? e : null;
  }

  async put(key: string, value: Uint8Array): Promise<number> {
    this.begin(key);
    return this.write(key, value, "PUT");
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    this.begin(key);
    if (this.entries.get(key)?.operation === "PUT") throw stateExists(this.name, key);
    return this.write(key, value, "PUT");
  }

  async update(key: string, value: Uint8Array, revision: number): Promise<number> {
    this.begin(key);
    if ((this.entries.get(key)?.revision ?? 0) !== revision) throw stateConflict(this.name, key);
    return this.write(key, value, "PUT");
  }

  async delete(key: string, options: { revision?: number } = {}): Promise<number> {
    this.begin(key);
    const rev = options.revision;
    if (rev !== undefined && rev > 0 && (this.entries.get(key)?.revision ?? 0) !== rev) {
      throw stateConflict(this.name, key);
    }
    return this.write(key, new Uint8Array(0), "DEL");
  }

  async keys(prefix = ""): Promise<string[]> {
    this.assertOnline();
    this.expire();
    const out: string[] = [];
    for (const [k, e] of this.entries) if (e.operation === "PUT" && k.startsWith(prefix)) out.push(k);
    return out;
  }

  async watch(options: WatchOptions): Promise<KvWatch> {
    this.assertOnline();
    this.expire();
    const filter = options.key ?? ">";
    const queue = new AsyncQueue<KvEntry>();
    const watcher: Watcher = { filter, queue };
    if (options.include === "initial") {
      for (const e of this.entries.values()) if (keyMatches(filter, e.key)) queue.push(e);
    }
    this.watchers.add(watcher);
    const stop = () => {
      this.watchers.delete(watcher);
      queue.end();
    };
    return {
      stop,
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  async headRevision(filter = ">"): Promise<number> {
    this.assertOnline();
    this.expire();
    let last = 0;
    // Map order is write order: the last match is the newest.
    for (const e of this.entries.values()) if (filter === ">" || keyMatches(filter, e.key)) last = e.revision;
    return last;
  }

  async last(filter: string): Promise<KvEntry | null> {
    this.assertOnline();
    this.expire();
    let last: KvEntry | null = null;
    for (const e of this.entries.values()) if (keyMatches(filter, e.key)) last = e;
    return last;
  }

  endWatches(): void {
    for (const w of this.watchers) w.queue.end();
    this.watchers.clear();
  }

  private begin(key: string): void {
    this.assertOnline();
    if (!validKey(key)) throw invalidKey(this.name, key);
    this.expire();
  }

  private write(key: string, value: Uint8Array, operation: KvOperation): number {
    const max = this.settings.maxValueBytes;
    if (max > 0 && value.byteLength > max) throw valueTooLarge(this.name, key, value.byteLength, max);
    const entry: KvEntry = {
      bucket: this.name,
      key,
      // Tombstones share one empty value: a bucket keeps them for its whole TTL.
      value: value.byteLength === 0 ? NO_VALUE : value.slice(),
      revision: ++this.seq,
      operation,
      createdMs: this.now(),
    };
    this.entries.delete(key); // re-insert at the end: Map order stays revision order
    this.entries.set(key, entry);
    for (const w of this.watchers) if (keyMatches(w.filter, key)) w.queue.push(entry);
    return entry.revision;
  }

  /** Drops entries older than the bucket TTL, oldest first, silently (like JetStream's max_age). */
  private expire(): void {
    const ttl = this.settings.ttlMs;
    if (!(ttl > 0)) return;
    const cutoff = this.now() - ttl;
    for (const [k, e] of this.entries) {
      if (e.createdMs > cutoff) break;
      this.entries.delete(k);
    }
  }
}
