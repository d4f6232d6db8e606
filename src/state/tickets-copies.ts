// The tickets bucket as this process follows it (docs/rules/state.md §10.1): either one copy of
// the whole bucket, or, with the scoped key layout, one copy per provider it can use, each fed
// by a watch filtered to that provider's keys (`*.<provider>.>`). A sidecar then pays for the
// churn of its own providers only, not the fleet's. Every claim, release and read names its
// provider, so it asks for that provider's copy; one it has not followed yet is started on
// demand and read once it holds a snapshot. The scope also grows ahead of use: the models a
// call chooses among bring in every provider whose offer key lists them (provider-offers.ts),
// and providers no call has needed for a while are dropped. The provider-state copies follow
// the same providers (`onFollow`, `onDrop`).
import { performance } from "node:perf_hooks";
import { type KvBucket, noteWrites } from "./kv.js";
import type { BucketMirror, MirrorEvent } from "./mirror.js";
import { type Offer, offerCovers } from "./provider-offers.js";
import type { KeyLayout } from "./ticket-keys.js";
import type { TicketsMirror, TicketsValue } from "./tickets-view.js";

export type TicketsScope = "all" | "candidates";

export interface TicketsCopiesOptions {
  keys: KeyLayout;
  /** "all": one copy of the whole bucket; "candidates": per provider (needs a layout that has filters). */
  scope: TicketsScope;
  /** Builds a copy following `filter` (unstarted). */
  make: (filter: string) => TicketsMirror;
  /** The offer keys: which providers offer which models (scope "candidates"). */
  catalog?: OfferCatalog;
  /** A provider's copy was started (scope "candidates"). */
  onFollow?: (provider: string) => void;
  /** A provider's copy was dropped (scope "candidates"). */
  onDrop?: (provider: string) => void;
  /** Monotonic clock (ms), for how long an unused provider stays followed; default performance.now. */
  monoNow?: () => number;
  /** A provider no read, claim or candidate model needed for this long is no longer followed (ms); default 10 min. */
  idleMs?: number;
}

/** The offers a sidecar scopes its copies by; `revision` moves whenever one changes. */
export interface OfferCatalog {
  readonly revision: number;
  offers(): Iterable<Offer>;
}

interface Followed {
  mirror: TicketsMirror;
  usedAt: number;
  /** Whether the last scope computed wants it (a provider offering a candidate model). */
  wanted?: boolean;
}

const DEFAULT_IDLE_MS = 10 * 60_000;

export class TicketsCopies {
  readonly name: string;
  /** The one copy in scope "all". */
  private readonly whole: TicketsMirror | undefined;
  private readonly byProvider = new Map<string, Followed>();
  private readonly listeners = new Set<(ev: MirrorEvent<TicketsValue>) => void>();
  private readonly unsubscribe = new Map<TicketsMirror, () => void>();
  /** Models calls chose among, with when they last did (monotonic ms). */
  private readonly models = new Map<string, number>();
  /** The provider-state revision and model count the scope was last computed for. */
  private scopedAt = { revision: -1, models: -1, at: Number.NEGATIVE_INFINITY };
  private readonly idleMs: number;
  private readonly monoNow: () => number;
  private closed = false;

  constructor(
    private readonly o: TicketsCopiesOptions,
    bucket: KvBucket,
  ) {
    this.name = bucket.name;
    this.idleMs = o.idleMs ?? DEFAULT_IDLE_MS;
    this.monoNow = o.monoNow ?? (() => performance.now());
    const scoped = o.scope === "candidates" && o.keys.providerFilter("p") !== undefined;
    this.whole = scoped ? undefined : o.make(">");
    if (this.whole !== undefined) this.follow(this.whole);
  }

  /** Whether the copies are per provider. */
  get scoped(): boolean {
    return this.whole === undefined;
  }

  /** Starts following (scope "all": the whole bucket; otherwise nothing until a provider is asked for). */
  async start(timeoutMs?: number): Promise<void> {
    if (this.whole !== undefined) await this.whole.start(timeoutMs);
  }

  /** The copy holding `provider`'s keys; in scope "candidates" it is started when first asked for. */
  of(provider: string): TicketsMirror {
    if (this.whole !== undefined) return this.whole;
    const now = this.monoNow();
    let f = this.byProvider.get(provider);
    if (f === undefined) {
      const mirror = this.o.make(this.o.keys.providerFilter(provider)!);
      f = { mirror, usedAt: now };
      this.byProvider.set(provider, f);
      this.follow(mirror);
      this.o.onFollow?.(provider);
      // A start that times out is retried by the copy itself; readers wait in fresh().
      mirror.start().catch(() => undefined);
    }
    f.usedAt = now;
    return f.mirror;
  }

  /** The copy of the provider a key belongs to (undefined: a foreign key, or not followed here). */
  ofKey(key: string): TicketsMirror | undefined {
    if (this.whole !== undefined) return this.whole;
    const p = this.o.keys.providerOf(key);
    return p === undefined ? undefined : this.byProvider.get(p)?.mirror;
  }

  /**
   * The copy following `provider` now, if any; unlike `of`, it neither starts one nor counts as a
   * use. For callers that know the provider: parsing it back out of the key costs a split per call.
   */
  following(provider: string): TicketsMirror | undefined {
    return this.whole ?? this.byProvider.get(provider)?.mirror;
  }

  /** The providers followed one by one (none in scope "all"). */
  get followed(): string[] {
    return [...this.byProvider.keys()];
  }

  /** Every copy followed now. */
  copies(): TicketsMirror[] {
    return this.whole !== undefined ? [this.whole] : [...this.byProvider.values()].map((f) => f.mirror);
  }

  /**
   * A call chooses among these models: follows every provider whose current state offers one
   * (and keeps following those), and stops following providers idle for `idleMs`.
   */
  interest(models: Iterable<string>): void {
    if (this.whole !== undefined || this.closed || this.o.catalog === undefined) return;
    const now = this.monoNow();
    for (const m of models) this.models.set(m, now);
    // The scope changes only with the offers, a new model, or idleness: a call whose models are
    // known on unchanged offers costs one comparison, not a scan of the fleet.
    const revision = this.o.catalog.revision;
    const s = this.scopedAt;
    if (s.revision === revision && s.models === this.models.size && now - s.at < this.idleMs / 10) {
      for (const p of this.byProvider.values()) if (p.wanted) p.usedAt = now;
      return;
    }
    for (const [m, at] of this.models) if (now - at > this.idleMs) this.models.delete(m);
    const wanted = new Set<string>();
    for (const o of this.o.catalog.offers()) {
      for (const m of this.models.keys()) {
        if (offerCovers(o, m)) {
          wanted.add(o.provider);
          break;
        }
      }
    }
    for (const p of wanted) this.of(p);
    for (const [p, f] of this.byProvider) {
      f.wanted = wanted.has(p);
      if (!f.wanted && now - f.usedAt > this.idleMs) this.drop(p, f);
    }
    this.scopedAt = { revision, models: this.models.size, at: now };
  }

  /**
   * The bucket, with every write remembered by the copy of its key's provider: that copy's next
   * `fresh()` also waits until it holds the write (read-your-writes, docs/rules/state.md §10).
   */
  tracked(bucket: KvBucket): KvBucket {
    return noteWrites(bucket, (key, rev) => this.ofKey(key)?.noteWritten(rev));
  }

  /** Proves every copy followed now current (docs/rules/state.md §10). */
  async fresh(): Promise<void> {
    await Promise.all(this.copies().map((m) => m.fresh()));
  }

  /** Connected, and every followed copy holds a snapshot (scope "candidates" with none: connected). */
  get available(): boolean {
    if (this.whole !== undefined) return this.whole.available;
    for (const f of this.byProvider.values()) if (!f.mirror.available) return false;
    return true;
  }

  /** Changes of every copy, present and future (the capacity watch's source). */
  onChange(listener: (ev: MirrorEvent<unknown>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    for (const m of this.copies()) m.close();
    for (const u of this.unsubscribe.values()) u();
    this.unsubscribe.clear();
    this.byProvider.clear();
  }

  private follow(mirror: BucketMirror<TicketsValue>): void {
    this.unsubscribe.set(
      mirror,
      mirror.onChange((ev) => {
        for (const l of [...this.listeners]) l(ev);
      }),
    );
  }

  private drop(provider: string, f: Followed): void {
    this.byProvider.delete(provider);
    this.unsubscribe.get(f.mirror)?.();
    this.unsubscribe.delete(f.mirror);
    f.mirror.close();
    this.o.onDrop?.(provider);
  }
}
