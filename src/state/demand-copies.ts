// The demand bucket as this process follows it (docs/rules/state.md §10.2): either one copy of
// the whole bucket, or, with the scoped key layout, one copy per model it decides about, each
// fed by a watch filtered to that model's keys (`*.<model>.>`: its waits, intents and use
// rates), plus one copy of the selection rates (`sel.>`) and one of the crews' service counters
// (`svc.>`, docs/rules/fairness.md §4). A sidecar then receives the demand of
// its own candidates and of the models resident on the providers it follows (the victims it may
// weigh), not the whole fleet's. Models no decision has needed for a while are dropped.
import { performance } from "node:perf_hooks";
import { type DemandEntry, kvToken } from "../core/index.js";
import { type KvBucket, noteWrites } from "./kv.js";
import type { BucketMirror, MirrorEntry } from "./mirror.js";
import type { KeyLayout } from "./ticket-keys.js";

export type DemandMirror = BucketMirror<DemandEntry>;
export type DemandScope = "all" | "candidates";

export interface DemandCopiesOptions {
  keys: KeyLayout;
  /** "all": one copy of the whole bucket; "candidates": per model (needs a layout that has filters). */
  scope: DemandScope;
  /** Builds a copy following `filter` (unstarted). */
  make: (filter: string) => DemandMirror;
  /**
   * The models resident on the providers this process follows, with a revision that changes
   * whenever they may have (scope "candidates"): their demand prices evicting them.
   */
  residents?: () => { revision: string; models: Iterable<string> };
  /** Monotonic clock (ms); default performance.now. */
  monoNow?: () => number;
  /** A model no decision needed for this long is no longer followed (ms); default 10 min. */
  idleMs?: number;
}

interface Followed {
  mirror: DemandMirror;
  usedAt: number;
}

const DEFAULT_IDLE_MS = 10 * 60_000;
const SEL_PREFIX = "sel.";
const SVC_PREFIX = "svc.";
/** Keys a per-model filter may also match, which the fleet-wide copies hold. */
const fleetWide = (key: string) => key.startsWith(SEL_PREFIX) || key.startsWith(SVC_PREFIX);

export class DemandCopies {
  readonly name: string;
  private readonly whole: DemandMirror | undefined;
  private readonly sel: DemandMirror | undefined;
  private readonly svc: DemandMirror | undefined;
  /** Per-model copies by the model's key token. */
  private readonly byModel = new Map<string, Followed>();
  private readonly unsubscribe = new Map<DemandMirror, () => void>();
  /** Bumped by every change of any copy and of the set of copies (the snapshot cache's key). */
  private changes = 0;
  /** The residents' revision the resident models were last followed for. */
  private residentsAt = { revision: "", at: Number.NEGATIVE_INFINITY };
  private readonly idleMs: number;
  private readonly monoNow: () => number;
  private closed = false;

  constructor(
    private readonly o: DemandCopiesOptions,
    bucket: KvBucket,
  ) {
    this.name = bucket.name;
    this.idleMs = o.idleMs ?? DEFAULT_IDLE_MS;
    this.monoNow = o.monoNow ?? (() => performance.now());
    const selFilter = o.keys.selFilter();
    const svcFilter = o.keys.serviceFilter();
    const scoped =
      o.scope === "candidates" &&
      selFilter !== undefined &&
      svcFilter !== undefined &&
      o.keys.modelFilter("m") !== undefined;
    this.whole = scoped ? undefined : this.follow(o.make(">"));
    this.sel = scoped ? this.follow(o.make(selFilter!)) : undefined;
    // Not followed for changes: counters move with every admission, and a decision reads them
    // only when a model has waiters, so they do not void the demand snapshot's cache.
    this.svc = scoped ? o.make(svcFilter!) : undefined;
  }

  /** Whether the copies are per model. */
  get scoped(): boolean {
    return this.whole === undefined;
  }

  /** Starts the whole copy (scope "all") or the fleet-wide copies (per model). */
  async start(timeoutMs?: number): Promise<void> {
    if (this.whole !== undefined) await this.whole.start(timeoutMs);
    else await Promise.all([this.sel!.start(timeoutMs), this.svc!.start(timeoutMs)]);
  }

  /** The copy holding `model`'s keys; per model, it is started when first asked for. */
  of(model: string): DemandMirror {
    if (this.whole !== undefined) return this.whole;
    const token = kvToken(model);
    let f = this.byModel.get(token);
    if (f === undefined) {
      const mirror = this.follow(this.o.make(this.o.keys.modelFilter(model)!));
      f = { mirror, usedAt: this.monoNow() };
      this.byModel.set(token, f);
      this.changes++;
      // A start that times out is retried by the copy itself; readers wait in fresh().
      mirror.start().catch(() => undefined);
    }
    return f.mirror;
  }

  /** The models followed one by one (their key tokens; none in scope "all"). */
  get followed(): string[] {
    return [...this.byModel.keys()];
  }

  /** A number that changes whenever any copy, or the set of copies, does. */
  get revision(): number {
    return this.changes;
  }

  /**
   * A decision weighs these models: follows them and the models resident on the providers this
   * process follows, and drops models idle for `idleMs`.
   */
  interest(models: Iterable<string>): void {
    if (this.whole !== undefined || this.closed) return;
    const now = this.monoNow();
    for (const m of models) this.touch(m, now);
    // The residents change only with the provider states or the providers followed: an
    // unchanged revision costs one comparison, not a scan (renewed now and then for idleness).
    const r = this.o.residents?.();
    const s = this.residentsAt;
    if (r === undefined || (r.revision === s.revision && now - s.at < this.idleMs / 10)) return;
    for (const m of r.models) this.touch(m, now);
    this.residentsAt = { revision: r.revision, at: now };
    for (const [token, f] of this.byModel) if (now - f.usedAt > this.idleMs) this.drop(token, f);
  }

  /** Follows `models` (when given), then proves every copy followed current (§10). */
  async fresh(models?: Iterable<string>): Promise<void> {
    if (models !== undefined) this.interest(models);
    await Promise.all(this.copies().map((m) => m.fresh()));
  }

  /** Every live entry of every copy, each key once. */
  *entries(): Iterable<MirrorEntry<DemandEntry>> {
    if (this.whole !== undefined) {
      yield* this.whole.entries();
      return;
    }
    yield* this.sel!.entries();
    // A model's filter can also match a selection or service key whose namespace token is the model's.
    for (const f of this.byModel.values()) {
      for (const e of f.mirror.entries()) if (!fleetWide(e.key)) yield e;
    }
  }

  /** The crews' service counters (docs/rules/fairness.md §4), as this process's copy holds them. */
  *services(): Iterable<MirrorEntry<DemandEntry>> {
    if (this.svc !== undefined) {
      yield* this.svc.entries();
      return;
    }
    for (const e of this.whole!.entries()) if (e.key.startsWith(SVC_PREFIX)) yield e;
  }

  /** A key as its copy holds it (undefined: absent, or its model not followed here). */
  get(key: string): MirrorEntry<DemandEntry> | undefined {
    return this.ofKey(key)?.get(key);
  }

  /**
   * The bucket, with every write remembered by the copy of its key: that copy's next `fresh()`
   * also waits until it holds the write (read-your-writes, docs/rules/state.md §10).
   */
  tracked(bucket: KvBucket): KvBucket {
    return noteWrites(bucket, (key, rev) => this.ofKey(key)?.noteWritten(rev));
  }

  /** Connected, and every followed copy holds a snapshot. */
  get available(): boolean {
    for (const m of this.copies()) if (!m.available) return false;
    return true;
  }

  close(): void {
    this.closed = true;
    this.svc?.close();
    for (const m of this.copies()) m.close();
    for (const u of this.unsubscribe.values()) u();
    this.unsubscribe.clear();
    this.byModel.clear();
  }

  private copies(): DemandMirror[] {
    if (this.whole !== undefined) return [this.whole];
    return [this.sel!, ...[...this.byModel.values()].map((f) => f.mirror)];
  }

  private ofKey(key: string): DemandMirror | undefined {
    if (this.whole !== undefined) return this.whole;
    if (key.startsWith(SEL_PREFIX)) return this.sel;
    if (key.startsWith(SVC_PREFIX)) return this.svc;
    const token = key.split(".", 2)[1];
    return token === undefined ? undefined : this.byModel.get(token)?.mirror;
  }

  private touch(model: string, now: number): void {
    this.of(model);
    this.byModel.get(kvToken(model))!.usedAt = now;
  }

  private follow(mirror: DemandMirror): DemandMirror {
    this.unsubscribe.set(
      mirror,
      mirror.onChange(() => {
        this.changes++;
      }),
    );
    return mirror;
  }

  private drop(token: string, f: Followed): void {
    this.byModel.delete(token);
    this.unsubscribe.get(f.mirror)?.();
    this.unsubscribe.delete(f.mirror);
    f.mirror.close();
    this.changes++;
  }
}
