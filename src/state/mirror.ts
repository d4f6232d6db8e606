// A local copy of one bucket kept current by a watch, so decisions read memory instead of the
// network (docs/rules/state.md §10: reads at most 200 ms old).
//
// Why a barrier: a push watch looks healthy even when its consumer silently died (a cluster
// node went away). So before a decision, `fresh()` proves the copy current at most
// `freshnessMs` ago: it asks the bucket for its head revision and waits until the watch has
// delivered it. One such round trip per bucket at most every `freshnessMs / 2` while reads
// keep coming (renewed ahead of time, in the background), shared by all callers.
// If the copy cannot catch up in time the watch is rebuilt and the read reports StateUnavailable.
//
// After a disconnect the copy is marked unavailable (reads fail fast) and, once the connection
// is back, rebuilt from a fresh snapshot (watch with initial values), retried with backoff.
// A snapshot rather than resuming after the last revision also catches deletions whose
// tombstones the server dropped meanwhile (TTL).
import { performance } from "node:perf_hooks";
import { FRESH_READ_MS } from "../core/index.js";
import { type Logger, silentLogger } from "../log/index.js";
import { CATCH_UP_TIMEOUT_MS } from "./defaults.js";
import { type KvBucket, type KvConnection, type KvEntry, type KvWatch, noteWrites } from "./kv.js";
import { stateUnavailable } from "./kv-errors.js";
import {
  type EarlyForget,
  type MirrorEntry,
  type MirrorEvent,
  MirrorState,
  type SeenKey,
} from "./mirror-state.js";

export type { EarlyForget, MirrorEntry, MirrorEvent, SeenKey } from "./mirror-state.js";

export interface MirrorOptions<T> {
  bucket: KvBucket;
  connection: KvConnection;
  /** Decodes a stored value; undefined = unreadable (it is then skipped; decode logs why). */
  decode: (entry: KvEntry) => T | undefined;
  /**
   * The keys this copy follows, as a watch filter (`*` one token, `>` the rest); default ">"
   * (the whole bucket). Barriers then wait for the newest revision among those keys.
   */
  filter?: string;
  /** Optional secondary index: the group a key belongs to (e.g. its provider). */
  group?: (key: string) => string | undefined;
  /**
   * Tombstones the copy may forget before the bucket's TTL (its memory then follows what is
   * still needed, not the bucket's delete rate). Default: each is kept for the TTL.
   */
  earlyForget?: EarlyForget;
  /** Called for every entry a watch delivers (a count of what following the bucket costs). */
  onEntry?: () => void;
  /** Entries applied between two prunes of expired entries and tombstones; default 1024. */
  pruneEvery?: number;
  /** Wall clock (epoch ms), for the bucket TTL. */
  now: () => number;
  /** Maximum age of the copy a read may use (ms); default 200. */
  freshnessMs?: number;
  /** How long a read may wait for the copy to catch up or resync (ms); default 2000. */
  catchUpTimeoutMs?: number;
  /** Backoff between attempts to re-establish the watch (ms); defaults 100 and 1000. */
  retryMinMs?: number;
  retryMaxMs?: number;
  logger?: Logger;
}

const mono = () => performance.now();

export class BucketMirror<T> {
  private state: MirrorState<T>;
  private gen = 0;
  private synced = false;
  private closed = false;
  private started = false;
  /** Monotonic ms at which the copy was last proven current. */
  private freshAt = Number.NEGATIVE_INFINITY;
  private barrier: Promise<void> | null = null;
  private watch: KvWatch | null = null;
  private applied = 0;
  /** Newest revision written through `tracked()`. */
  private writtenRevision = 0;
  private readonly listeners = new Set<(ev: MirrorEvent<T>) => void>();
  private readonly waiters = new Set<{
    ready: () => boolean;
    resolve: () => void;
    /** Set for waits that give up (false) when the copy is lost (disconnect, restart). */
    lost?: () => void;
  }>();
  /** Called on sync (resolves), on close or on a dropped connection (rejects with the reason). */
  private readonly syncWaiters = new Set<(reason?: string) => void>();
  private wake: (() => void) | null = null;
  private readonly abandon: (() => void)[] = [];
  private readonly unsubscribe: () => void;
  private readonly freshnessMs: number;
  private readonly catchUpTimeoutMs: number;
  private readonly logger: Logger;

  constructor(private readonly options: MirrorOptions<T>) {
    this.state = this.newState();
    this.freshnessMs = options.freshnessMs ?? FRESH_READ_MS;
    this.catchUpTimeoutMs = options.catchUpTimeoutMs ?? CATCH_UP_TIMEOUT_MS;
    this.logger = options.logger ?? silentLogger;
    this.unsubscribe = options.connection.onStatus((up) => {
      if (up) {
        this.wake?.();
        return;
      }
      // A read waiting for the copy cannot get one until the connection is back: it hears
      // "unavailable" now, not at its catch-up timeout (docs/rules/state.md §11).
      for (const w of [...this.syncWaiters]) w("disconnected");
      this.restart("disconnected");
    });
  }

  get name(): string {
    return this.options.bucket.name;
  }

  /** The keys this copy follows (a watch filter). */
  get filter(): string {
    return this.options.filter ?? ">";
  }

  /** Connected and holding a complete copy. */
  get available(): boolean {
    return this.options.connection.connected && this.synced;
  }

  /** The newest revision applied to the copy. */
  get revision(): number {
    return this.state.revision;
  }

  /** Age of the copy (ms since it was last proven current); Infinity before the first sync. */
  get ageMs(): number {
    return mono() - this.freshAt;
  }

  /** Monotonic time (performance.now) at which the copy was last proven current. */
  get confirmedAt(): number {
    return this.freshAt;
  }

  /**
   * The bucket, with every write made through it remembered: the next `fresh()` also waits
   * until the copy holds that write (read-your-writes within one process, at no network cost).
   */
  tracked(): KvBucket {
    return noteWrites(this.options.bucket, (_, rev) => this.noteWritten(rev));
  }

  /** A write made through another handle of the bucket: the next `fresh()` waits for it too. */
  noteWritten(revision: number): void {
    if (revision > this.writtenRevision) this.writtenRevision = revision;
  }

  /** Starts following the bucket; resolves once the first snapshot is in (or rejects on timeout). */
  async start(timeoutMs = this.catchUpTimeoutMs): Promise<void> {
    if (!this.started) {
      this.started = true;
      void this.run();
    }
    await this.waitSynced(timeoutMs);
  }

  /**
   * Ensures the copy is at most `freshnessMs` old; throws StateUnavailable when it cannot be.
   * With `since` (a performance.now() instant), the copy must also have been proven current at
   * or after it: it then holds every write acknowledged before `since` (a linearizable read).
   * With `maxAgeMs` (below `freshnessMs`), the copy must be at most that old.
   */
  async fresh(since = Number.NEGATIVE_INFINITY, maxAgeMs = this.freshnessMs): Promise<void> {
    const maxAge = Math.min(maxAgeMs, this.freshnessMs);
    if (this.closed) throw stateUnavailable(`${this.name}: closed`);
    if (!this.options.connection.connected) throw stateUnavailable(`${this.name}: disconnected`);
    // On return the copy was proven current at most `freshnessMs` ago: a barrier slower than
    // that is followed by another one.
    const deadline = mono() + this.catchUpTimeoutMs;
    if (!this.synced) await this.waitSynced(this.catchUpTimeoutMs);
    while (mono() - this.freshAt > maxAge || this.freshAt < since) {
      if (mono() > deadline) throw stateUnavailable(`${this.name}: could not confirm a fresh copy in time`);
      await this.startBarrier();
    }
    // Past half the bound, the proof is renewed in the background: a steady stream of reads
    // then never waits for a barrier, and decisions keep a margin below the bound (a process
    // descheduled between its check and its decision would otherwise overrun it).
    if (mono() - this.freshAt > this.freshnessMs / 2 && this.barrier === null) {
      this.startBarrier().catch(() => undefined); // a blocking reader sees the failure itself
    }
    const written = this.writtenRevision;
    if (
      this.state.revision < written &&
      !(await this.waitForRevision(written, this.catchUpTimeoutMs, true))
    ) {
      throw stateUnavailable(`${this.name}: the watch did not deliver our own write`);
    }
  }

  /** The revision of a key in the bucket itself, read now (one round trip); 0 when absent. */
  async headOf(key: string): Promise<number> {
    return (await this.options.bucket.get(key))?.revision ?? 0;
  }

  /** The live (not deleted, not expired) entry of a key. */
  get(key: string): MirrorEntry<T> | undefined {
    const e = this.state.live.get(key);
    return e !== undefined && this.alive(e) ? e : undefined;
  }

  /** What the copy last saw of a key (value or tombstone), or undefined if never seen. */
  seen(key: string): SeenKey | undefined {
    const e = this.state.live.get(key);
    if (e !== undefined) return { revision: e.revision, deleted: !this.alive(e) };
    const t = this.state.tombs.get(key);
    return t === undefined ? undefined : { revision: t.revision, deleted: true };
  }

  /**
   * The copy's contents as one opaque identity, replaced when the copy is rebuilt from a snapshot.
   * A key it `knows` stays known until the rebuild, or until its TTL or its tombstone's keep time
   * ends (prune): callers may remember answers about live leases for as long as this is the same.
   */
  get generation(): object {
    return this.state;
  }

  /** Whether the copy has seen the key at all (a value or a tombstone); seen() without its answer. */
  knows(key: string): boolean {
    return this.state.live.has(key) || this.state.tombs.has(key);
  }

  /** Whether the copy holds a live value of the key (not deleted, not past the TTL). */
  holdsLive(key: string): boolean {
    const e = this.state.live.get(key);
    return e !== undefined && this.alive(e);
  }

  /** Whether the copy saw the key and then its deletion (or its value outlived the TTL). */
  shownDeleted(key: string): boolean {
    const e = this.state.live.get(key);
    return e !== undefined ? !this.alive(e) : this.state.tombs.has(key);
  }

  /** Live entries of one group of the secondary index. */
  *group(name: string): Iterable<MirrorEntry<T>> {
    const m = this.state.groups.get(name);
    if (m === undefined) return;
    const after = this.liveAfter();
    for (const e of m.values()) if (e.createdMs > after) yield e;
  }

  /** The groups of the secondary index, by name. */
  groupNames(): Iterable<string> {
    return this.state.groups.keys();
  }

  /** Entries in one group of the secondary index (live or not yet pruned). */
  groupSize(name: string): number {
    return this.state.groups.get(name)?.size ?? 0;
  }

  /** All live entries. */
  *entries(): Iterable<MirrorEntry<T>> {
    // One clock read per scan, not per entry: a full scan runs on every placement.
    const after = this.liveAfter();
    for (const e of this.state.live.values()) if (e.createdMs > after) yield e;
  }

  /**
   * Resolves true once the copy holds `revision` (or newer); false on timeout. With
   * `failOnLoss`, also false as soon as the copy is lost (disconnected, rebuilt): it cannot
   * catch up before a resync then, and a read must report that at once.
   */
  waitForRevision(revision: number, timeoutMs = this.catchUpTimeoutMs, failOnLoss = false): Promise<boolean> {
    return this.waitFor(() => this.state.revision >= revision, timeoutMs, failOnLoss);
  }

  /** Resolves true once `condition` holds on the (synced) copy, checked after every change; false on timeout. */
  waitFor(condition: () => boolean, timeoutMs = this.catchUpTimeoutMs, failOnLoss = false): Promise<boolean> {
    if (this.synced && condition()) return Promise.resolve(true);
    if (failOnLoss && !this.synced) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(w);
        resolve(ok);
      };
      const w = {
        ready: () => this.synced && condition(),
        resolve: () => done(true),
        ...(failOnLoss ? { lost: () => done(false) } : {}),
      };
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        resolve(false);
      }, timeoutMs);
      this.waiters.add(w);
    });
  }

  /** Subscribes to changes of the copy; returns an unsubscribe function. */
  onChange(listener: (ev: MirrorEvent<T>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.gen++;
    this.synced = false;
    this.unsubscribe();
    this.watch?.stop();
    this.wake?.();
    for (const a of this.abandon.splice(0)) a();
    for (const w of this.syncWaiters) w();
  }

  /** Drops the current watch; the run loop builds a new copy from a snapshot. */
  restart(reason: string): void {
    this.logger.debug({ bucket: this.name, reason }, "state: rebuilding bucket watch");
    this.gen++;
    this.markUnsynced();
    const w = this.watch;
    this.watch = null;
    w?.stop();
    for (const a of this.abandon.splice(0)) a();
  }

  /** Resolves when the watch of generation `gen` is given up (restart or close). */
  private abandoned(gen: number): Promise<void> {
    return new Promise((resolve) => {
      if (gen !== this.gen || this.closed) resolve();
      else this.abandon.push(resolve);
    });
  }

  private newState(): MirrorState<T> {
    return new MirrorState<T>(this.options.group, this.options.decode);
  }

  private alive(e: MirrorEntry<T>): boolean {
    return e.createdMs > this.liveAfter();
  }

  /** Entries stored at or before this instant (epoch ms) are past the bucket TTL. */
  private liveAfter(): number {
    const ttl = this.options.bucket.settings.ttlMs;
    return ttl > 0 ? this.options.now() - ttl : Number.NEGATIVE_INFINITY;
  }

  private markUnsynced(): void {
    if (!this.synced) return;
    this.synced = false;
    this.freshAt = Number.NEGATIVE_INFINITY;
    for (const w of [...this.waiters]) w.lost?.();
    this.emit({ type: "availability", available: false });
  }

  private emit(ev: MirrorEvent<T>): void {
    for (const l of [...this.listeners]) {
      try {
        l(ev);
      } catch (err) {
        this.logger.error({ err, bucket: this.name }, "state: change listener failed");
      }
    }
  }

  private waitSynced(timeoutMs: number): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (reason = "closed") => {
        clearTimeout(timer);
        this.syncWaiters.delete(done);
        if (this.synced) resolve();
        else reject(stateUnavailable(`${this.name}: ${reason}`));
      };
      const timer = setTimeout(() => {
        this.syncWaiters.delete(done);
        reject(stateUnavailable(`${this.name}: no watch could be established`));
      }, timeoutMs);
      this.syncWaiters.add(done);
    });
  }

  /** The barrier in flight, or a new one: shared by every reader that needs one now. */
  private startBarrier(): Promise<void> {
    this.barrier ??= this.runBarrier().finally(() => {
      this.barrier = null;
    });
    return this.barrier;
  }

  private async runBarrier(): Promise<void> {
    const gen = this.gen;
    const t0 = mono();
    const head = await this.options.bucket.headRevision(this.filter);
    if (!(await this.waitForRevision(head, this.catchUpTimeoutMs, true))) {
      if (gen === this.gen) this.restart("watch fell behind the bucket head");
      throw stateUnavailable(`${this.name}: the watch did not catch up with revision ${head}`);
    }
    if (gen === this.gen && this.synced) this.freshAt = Math.max(this.freshAt, t0);
  }

  /** Follows the bucket until closed: snapshot, then updates; rebuilds after any failure. */
  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      if (!this.options.connection.connected) {
        await new Promise<void>((r) => {
          this.wake = r;
        });
        this.wake = null;
        continue;
      }
      const gen = ++this.gen;
      let watch: KvWatch | null = null;
      try {
        watch = await this.options.bucket.watch({ include: "initial", key: this.filter });
        if (gen !== this.gen) continue;
        this.watch = watch;
        const t0 = mono();
        const head = await this.options.bucket.headRevision(this.filter);
        if (gen !== this.gen) continue;
        let staging: MirrorState<T> | null = this.newState();
        const trySwap = () => {
          if (staging === null || staging.revision < head) return;
          this.state = staging;
          staging = null;
          this.synced = true;
          this.freshAt = t0;
          failures = 0;
          this.emit({ type: "reset" });
          this.emit({ type: "availability", available: true });
          for (const w of [...this.syncWaiters]) w();
          this.settleWaiters();
        };
        trySwap();
        const follow = async (w: KvWatch) => {
          for await (const e of w) {
            if (gen !== this.gen) break;
            this.options.onEntry?.();
            if (staging !== null) {
              staging.apply(e);
              trySwap();
              continue;
            }
            const ev = this.state.apply(e);
            if (ev === null) continue;
            if (++this.applied % (this.options.pruneEvery ?? 1024) === 0) {
              const { now, bucket, earlyForget } = this.options;
              this.state.prune(now(), bucket.settings.ttlMs, earlyForget);
            }
            this.emit(ev);
            this.settleWaiters();
          }
        };
        // A restart abandons the watch even if its iterator never ends (a stuck consumer).
        await Promise.race([follow(watch), this.abandoned(gen)]);
      } catch (err) {
        this.logger.warn({ err, bucket: this.name }, "state: bucket watch failed");
      } finally {
        watch?.stop();
      }
      if (this.closed) return;
      if (gen === this.gen) this.markUnsynced();
      const min = this.options.retryMinMs ?? 100;
      const max = this.options.retryMaxMs ?? 1000;
      const delay = Math.min(max, min * 2 ** Math.min(failures++, 8)) * (0.5 + Math.random() / 2);
      await new Promise((r) => setTimeout(r, failures === 1 ? 0 : delay));
    }
  }

  private settleWaiters(): void {
    if (this.waiters.size === 0) return;
    // No copy of the set: a waiter removes only itself as it resolves (allowed while a Set is
    // iterated), and new waiters arrive in later microtasks. Each write wakes every waiter, so
    // this runs once per watched write.
    for (const w of this.waiters) if (w.ready()) w.resolve();
  }
}
