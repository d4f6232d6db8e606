// The provider states as this process follows them (docs/rules/state.md §10.1): either one copy
// of the whole bucket, or, for a sidecar with the scoped layout, the offer keys whole (what each
// provider can serve, provider-offers.ts) plus one copy per provider whose tickets it follows,
// each fed by a watch on that provider's key alone. Which providers is decided by the tickets
// copies (tickets-copies.ts), which call `follow` and `drop`; both buckets then follow the same
// set, so a decision never reads the tickets of a provider whose state it cannot see.
import { performance } from "node:perf_hooks";
import type { ProviderState } from "../core/index.js";
import { type KvBucket, noteWrites } from "./kv.js";
import type { BucketMirror, MirrorEntry, MirrorEvent } from "./mirror.js";
import { isOfferKey, OFFERS_FILTER, type Offer } from "./provider-offers.js";

export interface ProviderStateCopiesOptions {
  /** Per provider (the offer keys say which providers exist); otherwise the whole bucket. */
  scoped: boolean;
  /** Builds a copy of the provider states matching `filter` (unstarted). */
  make: (filter: string) => BucketMirror<ProviderState>;
  /** Builds the copy of the offer keys (scoped only; unstarted). */
  makeCatalog: (filter: string) => BucketMirror<Offer>;
}

/** How long one snapshot of the whole bucket answers listings (ms). */
const SNAPSHOT_REUSE_MS = 1000;

export class ProviderStateCopies {
  readonly name: string;
  private readonly whole: BucketMirror<ProviderState> | undefined;
  /** The offer keys (scoped only). */
  readonly catalog: BucketMirror<Offer> | undefined;
  private readonly byProvider = new Map<string, { mirror: BucketMirror<ProviderState>; off: () => void }>();
  private readonly listeners = new Set<(ev: MirrorEvent<ProviderState>) => void>();
  private changes = 0;
  private closed = false;
  private snapshot: { at: number; entries: Promise<MirrorEntry<ProviderState>[]> } | undefined;

  constructor(
    private readonly o: ProviderStateCopiesOptions,
    bucket: KvBucket,
  ) {
    this.name = bucket.name;
    this.whole = o.scoped ? undefined : o.make(">");
    this.catalog = o.scoped ? o.makeCatalog(OFFERS_FILTER) : undefined;
    this.whole?.onChange((ev) => this.emit(ev));
  }

  get scoped(): boolean {
    return this.whole === undefined;
  }

  /** Starts the whole copy or the catalog; resolves with its first snapshot. */
  async start(timeoutMs?: number): Promise<void> {
    await (this.whole ?? this.catalog)?.start(timeoutMs);
  }

  /** Starts following a provider's state (scoped; idempotent). Its copy fills in the background. */
  follow(provider: string): void {
    if (this.whole !== undefined || this.closed || this.byProvider.has(provider)) return;
    // A provider's state key is its name: an exact filter, dots and all.
    const mirror = this.o.make(provider);
    const off = mirror.onChange((ev) => this.emit(ev));
    this.byProvider.set(provider, { mirror, off });
    // A start that times out is retried by the copy itself; readers wait in fresh().
    mirror.start().catch(() => undefined);
  }

  /** Stops following a provider's state (scoped). */
  drop(provider: string): void {
    const f = this.byProvider.get(provider);
    if (f === undefined) return;
    this.byProvider.delete(provider);
    f.off();
    f.mirror.close();
  }

  /** The copy that holds a provider's state; scoped, it is started when first asked for. */
  copyOf(provider: string): BucketMirror<ProviderState> {
    if (this.whole !== undefined) return this.whole;
    this.follow(provider);
    return this.byProvider.get(provider)!.mirror;
  }

  get(provider: string): MirrorEntry<ProviderState> | undefined {
    if (this.whole !== undefined) return this.whole.get(provider);
    return this.byProvider.get(provider)?.mirror.get(provider);
  }

  *entries(): Iterable<MirrorEntry<ProviderState>> {
    if (this.whole !== undefined) {
      yield* this.whole.entries();
      return;
    }
    for (const [p, f] of this.byProvider) {
      const e = f.mirror.get(p);
      if (e !== undefined) yield e;
    }
  }

  /** The offers the catalog holds (scoped; none otherwise). */
  *offers(): Iterable<Offer> {
    if (this.catalog === undefined) return;
    for (const e of this.catalog.entries()) if (e.value !== undefined) yield e.value;
  }

  /**
   * Every provider's state, fleet-wide: the whole copy proven current, or (scoped) one snapshot
   * of the whole bucket, read now and shared for a second by the reads that ask meanwhile. For
   * the proxy's model lists, which agents ask for rarely; never for decisions.
   */
  snapshotAll(): Promise<MirrorEntry<ProviderState>[]> {
    const whole = this.whole;
    if (whole !== undefined) return whole.fresh().then(() => [...whole.entries()]);
    const at = performance.now();
    if (this.snapshot !== undefined && at - this.snapshot.at < SNAPSHOT_REUSE_MS)
      return this.snapshot.entries;
    const m = this.o.make(">");
    const entries = m.start().then(
      () => {
        const out = [...m.entries()];
        m.close();
        return out;
      },
      (err: unknown) => {
        m.close();
        this.snapshot = undefined;
        throw err;
      },
    );
    this.snapshot = { at, entries };
    return entries;
  }

  /** Proves every state copy current (not the catalog: no decision reads it). */
  async fresh(maxAgeMs?: number): Promise<void> {
    await Promise.all(this.copies().map((m) => m.fresh(Number.NEGATIVE_INFINITY, maxAgeMs)));
  }

  /** Counts every change any state copy delivered: it moves whenever a state changes. */
  get revision(): number {
    return this.changes;
  }

  /** Connected, and the whole copy, or the catalog and every provider's copy, hold a snapshot. */
  get available(): boolean {
    if (this.whole !== undefined) return this.whole.available;
    if (!this.catalog!.available) return false;
    for (const f of this.byProvider.values()) if (!f.mirror.available) return false;
    return true;
  }

  /** State changes of every copy, present and future (not the catalog's). */
  onChange(listener: (ev: MirrorEvent<ProviderState>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The bucket, with every state write remembered by the copy that follows its key. */
  tracked(bucket: KvBucket): KvBucket {
    if (this.whole !== undefined) return this.whole.tracked();
    return noteWrites(bucket, (key, rev) => {
      if (!isOfferKey(key)) this.byProvider.get(key)?.mirror.noteWritten(rev);
    });
  }

  close(): void {
    this.closed = true;
    this.whole?.close();
    this.catalog?.close();
    for (const p of [...this.byProvider.keys()]) this.drop(p);
  }

  private copies(): BucketMirror<ProviderState>[] {
    return this.whole !== undefined ? [this.whole] : [...this.byProvider.values()].map((f) => f.mirror);
  }

  private emit(ev: MirrorEvent<ProviderState>): void {
    if (ev.type !== "availability") this.changes++;
    for (const l of [...this.listeners]) l(ev);
  }
}
