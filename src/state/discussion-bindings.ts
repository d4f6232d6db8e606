// kubemoot_discussion_bindings (docs/rules/state.md §2.5): one binding per (discussion thread,
// phase), published by the operator-side binder only, read here by sidecars (and by any plain
// NATS subscriber of `$KV.kubemoot_discussion_bindings.>`). A reader keeps a copy of the whole
// bucket, kept current by one watch (KvBucket.watch, `>`, first the last revision of every key):
// `get` reads memory, never the network.
//
// Why not a BucketMirror (mirror.ts): it keeps every key it is shown, and this copy must stay
// bounded (at most `maxEntries`, by default 100 000) against a bucket anyone with write rights can
// fill; and nothing here needs its freshness barriers: bindings change at the binder's pace, and
// a reader that misses one for a while runs on the previous one. The watch itself is followed as
// the mirror does: a snapshot swapped in once it reaches the bucket's head revision, rebuilt from
// a new snapshot after a lost connection or a failed watch (retried with backoff). Meanwhile
// `get` keeps answering from the last copy (`available` says whether it is current); entries past
// the bucket's TTL (which the server drops without a watch event) are hidden and pruned.
import type { Logger } from "../log/index.js";
import { bucketSettings, DISCUSSION_BINDINGS_BUCKET } from "./buckets.js";
import {
  DISCUSSION_PHASES,
  type DiscussionBinding,
  type DiscussionPhase,
  decodeDiscussionBinding,
  discussionBindingKey,
  encodeDiscussionBinding,
  parseDiscussionBindingKey,
  validatePhase,
  validateThreadId,
} from "./discussion-codec.js";
import type { KvBucket, KvEntry, KvStore, KvWatch } from "./kv.js";
import { stateUnavailable } from "./kv-errors.js";

export { DISCUSSION_BINDINGS_BUCKET } from "./buckets.js";

/** The binder rewrites every live binding at least this often (ms), well inside the 30-minute TTL. */
export const DISCUSSION_BINDING_REFRESH_MS = 10 * 60_000;
/** Most bindings a reader's copy holds; new keys beyond are dropped with a warning. */
export const MAX_DISCUSSION_BINDINGS = 100_000;

export interface DiscussionBindingsOptions {
  /** Where skipped values, dropped entries and watch failures are reported; default silent. */
  logger?: Pick<Logger, "warn">;
  /** Most entries the copy holds; default MAX_DISCUSSION_BINDINGS. */
  maxEntries?: number;
  /** Wall clock (epoch ms), for the bucket TTL; default Date.now. */
  now?: () => number;
  /** Backoff between attempts to re-establish the watch (ms); defaults 100 and 1000. */
  retryMinMs?: number;
  retryMaxMs?: number;
}

/** A change of the copy. "reset": the copy was replaced by a new snapshot (read again). */
export type DiscussionBindingEvent =
  | { type: "put"; key: string; binding: DiscussionBinding; revision: number }
  | { type: "delete"; key: string; thread: string; phase: DiscussionPhase; revision: number }
  | { type: "reset" };

interface Held {
  readonly binding: DiscussionBinding;
  readonly revision: number;
  /** When the server stored it (epoch ms): the TTL counts from here. */
  readonly createdMs: number;
}

/** One copy of the bucket: the last binding of each key and the newest revision applied. */
interface Copy {
  readonly entries: Map<string, Held>;
  revision: number;
}

/** Entries applied between two prunes of expired ones. */
const PRUNE_EVERY = 1024;

export class DiscussionBindings {
  /** Resolves once the first snapshot is in; rejects with StateUnavailable if closed before. */
  readonly ready: Promise<void>;
  private copy: Copy = { entries: new Map(), revision: 0 };
  private synced = false;
  private everSynced = false;
  private closed = false;
  private watch: KvWatch | null = null;
  /** Ends the current follow (a lost connection, close) even if its iterator never ends. */
  private abandon: (() => void) | null = null;
  /** Ends a wait for the connection or a backoff pause. */
  private wake: (() => void) | null = null;
  private full = false;
  private droppedEntries = 0;
  private applied = 0;
  private settleReady: (err?: Error) => void = () => undefined;
  private readonly listeners = new Set<(ev: DiscussionBindingEvent) => void>();
  private readonly unsubscribe: () => void;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly warn: (obj: object, msg: string) => void;

  /** Opens (creating if needed) the bucket and starts following it; await `ready` for the first snapshot. */
  static async open(
    kv: KvStore,
    replicas = 1,
    options: DiscussionBindingsOptions = {},
  ): Promise<DiscussionBindings> {
    const settings = bucketSettings(replicas)[DISCUSSION_BINDINGS_BUCKET]!;
    const bucket = await kv.bucket(DISCUSSION_BINDINGS_BUCKET, settings);
    return new DiscussionBindings(kv, bucket, options);
  }

  private constructor(
    private readonly kv: KvStore,
    private readonly bucket: KvBucket,
    private readonly options: DiscussionBindingsOptions,
  ) {
    this.maxEntries = options.maxEntries ?? MAX_DISCUSSION_BINDINGS;
    this.now = options.now ?? Date.now;
    const logger = options.logger;
    this.warn = (obj, msg) => logger?.warn(obj, msg);
    this.ready = new Promise<void>((resolve, reject) => {
      this.settleReady = (err) => (err === undefined ? resolve() : reject(err));
    });
    this.ready.catch(() => undefined); // a caller that never awaits it must not see an unhandled rejection
    this.unsubscribe = kv.connection.onStatus((up) => {
      if (up) this.wake?.();
      else this.lose();
    });
    void this.run();
  }

  /** The bucket's name. */
  get name(): string {
    return this.bucket.name;
  }

  /** Connected and holding a copy built since the last (re)connect. */
  get available(): boolean {
    return this.kv.connection.connected && this.synced;
  }

  /** Bindings in the copy (expired ones not yet pruned included). */
  get size(): number {
    return this.copy.entries.size;
  }

  /** The newest bucket revision the copy has applied. */
  get revision(): number {
    return this.copy.revision;
  }

  /** New keys left out of the copy because it was full (since open). */
  get dropped(): number {
    return this.droppedEntries;
  }

  /**
   * Writes `v` under `<thread>.<phase>` (the binder only); returns the bucket revision. Throws
   * InvalidArgument for a value readers would skip (encodeDiscussionBinding), StateUnavailable
   * while the store is away or after close.
   */
  async publish(v: DiscussionBinding): Promise<number> {
    const bytes = encodeDiscussionBinding(v);
    this.checkOpen();
    return this.bucket.put(discussionBindingKey(v.thread, v.phase), bytes);
  }

  /** Deletes the binding of one phase of a thread, or of both; returns the last tombstone's revision. */
  async remove(threadId: string, phase?: DiscussionPhase): Promise<number> {
    validateThreadId(threadId, "threadId");
    if (phase !== undefined) validatePhase(phase, "phase");
    this.checkOpen();
    let revision = 0;
    for (const p of phase === undefined ? DISCUSSION_PHASES : [phase]) {
      revision = await this.bucket.delete(discussionBindingKey(threadId, p));
    }
    return revision;
  }

  /** The binding of a (thread, phase) in the copy, or undefined (absent, deleted, past the TTL). Do not mutate it. */
  get(threadId: string, phase: DiscussionPhase): DiscussionBinding | undefined {
    validateThreadId(threadId, "threadId");
    validatePhase(phase, "phase");
    const held = this.copy.entries.get(`${threadId}.${phase}`);
    return held !== undefined && held.createdMs > this.expiredAt() ? held.binding : undefined;
  }

  /** Calls `listener` on every change of the copy; returns the unsubscribe function. */
  onChange(listener: (ev: DiscussionBindingEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Stops following the bucket (the store stays open: it is the caller's). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.synced = false;
    this.unsubscribe();
    this.listeners.clear();
    this.lose();
    this.wake?.();
    if (!this.everSynced)
      this.settleReady(stateUnavailable(`${this.name}: closed before its first snapshot`));
  }

  private checkOpen(): void {
    if (this.closed) throw stateUnavailable(`${this.name}: closed`);
  }

  /** Gives up the current watch (the run loop builds a new copy once connected). */
  private lose(): void {
    this.synced = false;
    this.watch?.stop();
    this.abandon?.();
  }

  /** Entries stored at or before this instant (epoch ms) are past the bucket TTL. */
  private expiredAt(): number {
    const ttl = this.bucket.settings.ttlMs;
    return ttl > 0 ? this.now() - ttl : Number.NEGATIVE_INFINITY;
  }

  /** Follows the bucket until closed: snapshot, then updates; rebuilds after any failure. */
  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      if (!this.kv.connection.connected) {
        await this.pause();
        continue;
      }
      try {
        await this.follow(() => {
          failures = 0;
        });
      } catch (err) {
        this.warn({ err, bucket: this.name }, "discussion bindings: watch failed");
      }
      if (this.closed) return;
      this.synced = false;
      const min = this.options.retryMinMs ?? 100;
      const max = this.options.retryMaxMs ?? 1000;
      const delay = Math.min(max, min * 2 ** Math.min(failures++, 8)) * (0.5 + Math.random() / 2);
      await this.pause(failures === 1 ? 0 : delay);
    }
  }

  /** Waits for `ms`, or (without it) for the connection; close ends either at once. */
  private async pause(ms?: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }

  /** One watch: a snapshot built aside and swapped in at the head revision, then live updates. */
  private async follow(onSynced: () => void): Promise<void> {
    const watch = await this.bucket.watch({ include: "initial", key: ">" });
    this.watch = watch;
    const abandoned = new Promise<void>((resolve) => {
      this.abandon = resolve;
    });
    try {
      if (this.closed) return;
      const head = await this.bucket.headRevision();
      let staging: Copy | null = { entries: new Map(), revision: 0 };
      const trySwap = () => {
        if (staging === null || staging.revision < head || this.closed) return;
        this.copy = staging;
        staging = null;
        this.synced = true;
        onSynced();
        this.emit({ type: "reset" });
        if (!this.everSynced) {
          this.everSynced = true;
          this.settleReady();
        }
      };
      trySwap();
      const consume = async () => {
        for await (const e of watch) {
          if (this.closed || this.watch !== watch) return;
          if (staging !== null) {
            this.apply(staging, e, false);
            trySwap();
          } else {
            this.apply(this.copy, e, true);
          }
        }
      };
      await Promise.race([consume(), abandoned]);
    } finally {
      watch.stop();
      if (this.watch === watch) this.watch = null;
      this.abandon = null;
    }
  }

  /** Applies one watch entry to `copy`; `live` copies tell the listeners. */
  private apply(copy: Copy, e: KvEntry, live: boolean): void {
    if (e.revision <= copy.revision) return;
    copy.revision = e.revision;
    if (++this.applied % PRUNE_EVERY === 0) this.prune(copy);
    if (e.operation !== "PUT") {
      this.forget(copy, e.key, e.revision, live);
      return;
    }
    const decoded = decodeDiscussionBinding(e.value, e.key);
    if (decoded.binding === undefined) {
      this.warn(
        { bucket: this.name, key: e.key, revision: e.revision, reason: decoded.reason },
        "discussion bindings: skipping a value that is not a binding",
      );
      this.forget(copy, e.key, e.revision, live);
      return;
    }
    if (!copy.entries.has(e.key)) {
      if (copy.entries.size >= this.maxEntries) this.prune(copy);
      if (copy.entries.size >= this.maxEntries) {
        // One warning per episode: until a new key finds room again.
        this.droppedEntries++;
        if (!this.full) {
          this.full = true;
          this.warn(
            { bucket: this.name, key: e.key, maxEntries: this.maxEntries },
            "discussion bindings: copy full, leaving out new keys until there is room",
          );
        }
        return;
      }
      this.full = false;
    }
    const binding = decoded.binding;
    copy.entries.set(e.key, { binding, revision: e.revision, createdMs: e.createdMs });
    if (live) this.emit({ type: "put", key: e.key, binding, revision: e.revision });
  }

  /** Drops a key's binding from `copy` (deleted, or overwritten by something that is not one). */
  private forget(copy: Copy, key: string, revision: number, live: boolean): void {
    if (!copy.entries.delete(key) || !live) return;
    const named = parseDiscussionBindingKey(key);
    if (named !== undefined) this.emit({ type: "delete", key, ...named, revision });
  }

  /** Forgets entries past the bucket TTL (the server has dropped them without telling watches). */
  private prune(copy: Copy): void {
    const after = this.expiredAt();
    for (const [k, h] of copy.entries) if (h.createdMs <= after) copy.entries.delete(k);
  }

  private emit(ev: DiscussionBindingEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(ev);
      } catch (err) {
        this.warn({ err, bucket: this.name }, "discussion bindings: change listener failed");
      }
    }
  }
}
