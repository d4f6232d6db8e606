// The demand board (kubemoot_model_demand): who waits for which model, which threads plan to
// call it, how often it was used and how often agents naming it are selected. Entries expire
// by expiresAt (the bucket TTL is the backstop); rates decay with a 10-minute half-life and
// gain +1 per event. The snapshot hands the raw live entries to core's aggregation.
import { performance } from "node:perf_hooks";
import {
  type Band,
  bumpRate,
  type DemandEntry,
  FRESH_READ_MS,
  INTENT_TTL_MS,
  type IntentEntry,
  type QueueEntry,
  RATE_ENTRY_TTL_MS,
  recordLatency,
  type SelEntry,
  type ServiceEntry,
  type UseEntry,
  WAIT_ENTRY_TTL_MS,
  type WaitEntry,
} from "../core/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import { parseDemand } from "./demand-codec.js";
import type { DemandCopies } from "./demand-copies.js";
import { decodeJson, encodeJson, type KvBucket, type KvEntry } from "./kv.js";
import type { KeyLayout } from "./ticket-keys.js";

export function demandDecoder(logger: Logger, ttlMs: number): (e: KvEntry) => DemandEntry | undefined {
  return (e) => {
    let raw: unknown;
    try {
      raw = decodeJson(e.value);
    } catch (err) {
      logger.warn({ key: e.key, revision: e.revision, err }, "state: skipping an unreadable demand entry");
      return undefined;
    }
    const fallback = ttlMs > 0 ? e.createdMs + ttlMs : Number.MAX_SAFE_INTEGER;
    const d = parseDemand(e.key, raw, fallback);
    if (d === undefined)
      logger.warn({ key: e.key, revision: e.revision }, "state: skipping a malformed demand entry");
    return d;
  };
}

/** Live demand entries at `atMs`, by kind (and all together for core's aggregateDemand). */
export interface DemandSnapshot {
  atMs: number;
  entries: DemandEntry[];
  wait: WaitEntry[];
  intent: IntentEntry[];
  use: UseEntry[];
  sel: SelEntry[];
  /** Waiting calls (docs/rules/fairness.md §3) of the models read. */
  queue: QueueEntry[];
}

/** Live entries sorted by kind (all of them live at `atMs`). */
export function demandSnapshotOf(atMs: number, live: Iterable<DemandEntry>): DemandSnapshot {
  const s: DemandSnapshot = { atMs, entries: [], wait: [], intent: [], use: [], sel: [], queue: [] };
  for (const v of live) {
    if (v.kind === "wait") s.wait.push(v);
    else if (v.kind === "intent") s.intent.push(v);
    else if (v.kind === "use") s.use.push(v);
    else if (v.kind === "sel") s.sel.push(v);
    else if (v.kind === "queue") s.queue.push(v);
    else continue; // service counters are read on their own (DemandBoard.services)
    s.entries.push(v);
  }
  return s;
}

export interface DemandBoardOptions {
  bucket: KvBucket;
  /** The demand keys' layout (docs/rules/state.md §2.4). */
  keys: KeyLayout;
  /** The copies this process follows (the whole bucket, or per model: ./demand-copies.ts). */
  copies: DemandCopies;
  /** Wall clock (epoch ms). */
  now: () => number;
  /** Lifetimes (ms); defaults 10 min (wait), 3 min (intent), 6 h (use, sel). */
  waitTtlMs?: number;
  intentTtlMs?: number;
  rateTtlMs?: number;
  /** How long a snapshot may be reused (ms); default 200. */
  snapshotCacheMs?: number;
}

export class DemandBoard {
  private cached: { atMono: number; revision: number; snapshot: DemandSnapshot } | null = null;
  /** Bumps queued per key behind the one in flight (see bump). */
  private readonly bumps = new Map<string, BumpStep[]>();
  /** Wake-ups of drains lingering before their first write. */
  private readonly lingering = new Set<() => void>();
  /** Callers of flush() waiting for a key's drain to end. */
  private readonly drained = new Map<string, Set<() => void>>();
  /** Models of the intents this process wrote, by thread (clearThread follows them first). */
  private readonly threadModels = new Map<string, Set<string>>();
  /** This process's last write of each bumped key (newer than the copy until the watch delivers it). */
  private readonly lastWrites = new Map<string, { revision: number; value: DemandEntry }>();

  constructor(private readonly o: DemandBoardOptions) {}

  /** An agent waits for capacity to run `model` (tells planners not to unload it). */
  async putWait(model: string, agent: string): Promise<WaitEntry> {
    const entry: WaitEntry = { kind: "wait", model, agent, expiresAt: this.o.now() + this.waitTtl };
    await this.o.bucket.put(this.o.keys.wait(model, agent), encodeJson(entry));
    return entry;
  }

  async clearWait(model: string, agent: string): Promise<void> {
    await this.o.bucket.delete(this.o.keys.wait(model, agent));
  }

  /** A call of `agent` waits (or renews its wait) for fair admission (docs/rules/fairness.md §3). */
  async putQueue(entry: QueueEntry, agent: string): Promise<void> {
    await this.o.bucket.put(this.o.keys.queue(entry.model, agent, entry.id), encodeJson(entry));
  }

  async clearQueue(model: string, agent: string, id: string): Promise<void> {
    await this.o.bucket.delete(this.o.keys.queue(model, agent, id));
  }

  /**
   * This process's service counter of a crew (docs/rules/fairness.md §4): its own key, so a
   * plain put; the caller coalesces.
   */
  async putService(entry: ServiceEntry, agent: string, instance: string): Promise<void> {
    await this.o.bucket.put(this.o.keys.service(entry.crew, agent, instance), encodeJson(entry));
  }

  /** A thread of `agent` plans to call these models. */
  async putIntents(agent: string, thread: string, models: readonly string[]): Promise<IntentEntry[]> {
    const expiresAt = this.o.now() + (this.o.intentTtlMs ?? INTENT_TTL_MS);
    const entries = [...new Set(models)].map(
      (model): IntentEntry => ({ kind: "intent", model, agent, thread, expiresAt }),
    );
    let written = this.threadModels.get(thread);
    if (written === undefined) {
      written = new Set();
      this.threadModels.set(thread, written);
      // Bounded: a thread never cleared here ends with its intents' lifetime anyway.
      if (this.threadModels.size > 4096) this.threadModels.delete(this.threadModels.keys().next().value!);
    }
    for (const e of entries) written.add(e.model);
    await Promise.all(
      entries.map((e) => this.o.bucket.put(this.o.keys.intent(e.model, agent), encodeJson(e))),
    );
    return entries;
  }

  /**
   * Removes the intents a thread published (of one agent, or of all). Each is deleted at the
   * revision read, so an intent another thread wrote meanwhile stays. Returns how many went.
   */
  async clearThread(thread: string, agent?: string): Promise<number> {
    // Followed per model, the copies hold the intents of the models this process wrote them for.
    await this.o.copies.fresh(this.threadModels.get(thread) ?? []);
    if (agent === undefined) this.threadModels.delete(thread);
    const doomed: { key: string; revision: number }[] = [];
    for (const e of this.o.copies.entries()) {
      const v = e.value;
      if (v?.kind !== "intent" || v.thread !== thread) continue;
      if (agent !== undefined && v.agent !== agent) continue;
      doomed.push({ key: e.key, revision: e.revision });
    }
    let cleared = 0;
    await Promise.all(
      doomed.map(async (d) => {
        try {
          await this.o.bucket.delete(d.key, { revision: d.revision });
          cleared++;
        } catch (err) {
          if (!KubemootError.is(err, ErrorCode.StateConflict)) throw err;
        }
      }),
    );
    return cleared;
  }

  /**
   * One more call to `model` (by `agent`): its decayed use rate gains +1. With `lingerMs`, a
   * write that is not already queued waits that long first, so the uses of a busy model
   * within it go in one write (off the caller's path; `flush()` cuts the wait short).
   */
  /**
   * A call of `model` ran: its decayed use rate gains +1, and `serviceMs` (the call's time
   * without its load), when given, moves the fleet's service-time EMA of the model.
   */
  recordUse(model: string, agent: string, lingerMs = 0, serviceMs = 0, band?: Band): Promise<UseEntry> {
    return this.bump(this.o.keys.use(model, agent), lingerMs, (old, now): UseEntry => {
      const prev = old?.kind === "use" ? old : undefined;
      const service = serviceMs > 0 ? recordLatency(prev?.serviceMs, serviceMs) : prev?.serviceMs;
      const bands = band !== undefined ? { ...prev?.bands, [band]: now } : prev?.bands;
      return {
        kind: "use",
        model,
        agent,
        rate: bumpRate(prev?.rate ?? 0, prev?.updatedAt ?? now, now),
        updatedAt: now,
        lastUsedAt: now,
        expiresAt: now + this.rateTtl,
        ...(service !== undefined ? { serviceMs: service } : {}),
        ...(bands !== undefined ? { bands } : {}),
      };
    });
  }

  /** `agent` of `crew` was selected, naming these models: its decayed selection rate gains +1. */
  recordSelection(crew: string, agent: string, models: readonly string[]): Promise<SelEntry> {
    return this.bump(this.o.keys.sel(crew, agent), 0, (old, now): SelEntry => {
      const prev = old?.kind === "sel" ? old : undefined;
      return {
        kind: "sel",
        rate: bumpRate(prev?.rate ?? 0, prev?.updatedAt ?? now, now),
        updatedAt: now,
        expiresAt: now + this.rateTtl,
        models: [...new Set(models)],
      };
    });
  }

  /**
   * The crews' service counters live now (docs/rules/fairness.md §4), as the copy holds them:
   * no freshness proof, a counter a moment old only orders waiters a moment late.
   */
  services(): ServiceEntry[] {
    const now = this.o.now();
    const out: ServiceEntry[] = [];
    for (const e of this.o.copies.services())
      if (e.value?.kind === "svc" && e.value.expiresAt > now) out.push(e.value);
    return out;
  }

  /**
   * Live entries, read at most 200 ms old (reused for up to 200 ms while nothing changed). A
   * decision among `models` names them: copies followed per model then follow them (and the
   * models resident where they run) first.
   */
  async snapshot(models?: readonly string[]): Promise<DemandSnapshot> {
    await this.o.copies.fresh(models);
    const c = this.cached;
    const maxAge = this.o.snapshotCacheMs ?? FRESH_READ_MS;
    const fresh =
      c !== null && performance.now() - c.atMono <= maxAge && this.o.now() - c.snapshot.atMs <= maxAge;
    if (c !== null && fresh && c.revision === this.o.copies.revision) return c.snapshot;
    const atMs = this.o.now();
    const live: DemandEntry[] = [];
    for (const e of this.o.copies.entries()) {
      const v = e.value;
      if (v !== undefined && v.expiresAt > atMs) live.push(v);
    }
    const s = demandSnapshotOf(atMs, live);
    this.cached = { atMono: performance.now(), revision: this.o.copies.revision, snapshot: s };
    return s;
  }

  private get waitTtl(): number {
    return this.o.waitTtlMs ?? WAIT_ENTRY_TTL_MS;
  }

  private get rateTtl(): number {
    return this.o.rateTtlMs ?? RATE_ENTRY_TTL_MS;
  }

  /**
   * Read-modify-write of a rate entry by compare-and-set (bounded retries). Bumps of one key
   * from this process are coalesced: while one write is in flight, later bumps queue up and
   * go together in the next write (their updates applied in order, each caller getting its
   * own step's value), so N concurrent uses cost one write, not N racing ones. The first
   * attempt reads the key from the watched copy (or this process's own last write, if newer)
   * instead of the server: the compare-and-set catches a stale read, and only then is the
   * key read back from the server.
   */
  private bump<T extends DemandEntry>(
    key: string,
    lingerMs: number,
    next: (old: DemandEntry | undefined, nowMs: number) => T,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const step: BumpStep = { next, resolve: resolve as (v: DemandEntry) => void, reject };
      const queued = this.bumps.get(key);
      if (queued !== undefined) {
        queued.push(step);
        return;
      }
      const queue = [step];
      this.bumps.set(key, queue);
      void this.drainBumps(key, queue, lingerMs);
    });
  }

  /** Writes every lingering bump now (shutdown). Resolves once they are written. */
  async flush(): Promise<void> {
    for (const wake of [...this.lingering]) wake();
    const pending = [...this.bumps.keys()].map(
      (key) =>
        new Promise<void>((r) => {
          let waiting = this.drained.get(key);
          if (waiting === undefined) {
            waiting = new Set();
            this.drained.set(key, waiting);
          }
          waiting.add(r);
        }),
    );
    await Promise.all(pending);
  }

  private async drainBumps(key: string, queue: BumpStep[], lingerMs: number): Promise<void> {
    if (lingerMs > 0) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.lingering.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, lingerMs);
        this.lingering.add(wake);
      });
    }
    while (queue.length > 0) {
      const steps = queue.splice(0);
      try {
        const values = await this.writeBumps(key, steps);
        for (let i = 0; i < steps.length; i++) steps[i]!.resolve(values[i]!);
      } catch (err) {
        for (const st of steps) st.reject(err);
      }
    }
    // Synchronously with the last emptiness check, so a later bump starts a new drain.
    this.bumps.delete(key);
    const waiting = this.drained.get(key);
    this.drained.delete(key);
    for (const r of waiting ?? []) r();
  }

  private async writeBumps(key: string, steps: readonly BumpStep[]): Promise<DemandEntry[]> {
    for (let attempt = 0; attempt < 32; attempt++) {
      // A little random backoff after a lost race with another process, so writers spread out.
      if (attempt > 1) await new Promise((r) => setTimeout(r, Math.random() * Math.min(20, 2 * attempt)));
      const cur = attempt === 0 ? this.localEntry(key) : await this.serverEntry(key);
      const now = this.o.now();
      let old = cur?.value;
      if (old !== undefined && !(old.expiresAt > now)) old = undefined; // expired: start over
      const values: DemandEntry[] = [];
      let v = old;
      for (const st of steps) {
        v = st.next(v, now);
        values.push(v);
      }
      const bytes = encodeJson(v);
      try {
        const revision =
          cur === null
            ? await this.o.bucket.create(key, bytes)
            : await this.o.bucket.update(key, bytes, cur.revision);
        this.lastWrites.delete(key);
        this.lastWrites.set(key, { revision, value: v! });
        if (this.lastWrites.size > 1024)
          this.lastWrites.delete(this.lastWrites.keys().next().value as string);
        return values;
      } catch (err) {
        if (
          !KubemootError.is(err, ErrorCode.StateConflict) &&
          !KubemootError.is(err, ErrorCode.StateExists)
        ) {
          throw err;
        }
      }
    }
    throw new KubemootError(ErrorCode.StateConflict, `${key}: kept conflicting`);
  }

  /** The key as the watched copy (or our own newer write) has it; null when absent. */
  private localEntry(key: string): { revision: number; value: DemandEntry | undefined } | null {
    const m = this.o.copies.get(key);
    const own = this.lastWrites.get(key);
    if (own !== undefined && (m === undefined || own.revision > m.revision)) return own;
    return m === undefined ? null : { revision: m.revision, value: m.value };
  }

  /** The key as the server has it; null when absent. */
  private async serverEntry(
    key: string,
  ): Promise<{ revision: number; value: DemandEntry | undefined } | null> {
    const e = await this.o.bucket.get(key);
    if (e === null) return null;
    let value: DemandEntry | undefined;
    try {
      value = parseDemand(key, decodeJson(e.value), 0);
    } catch {
      value = undefined;
    }
    return { revision: e.revision, value };
  }
}

interface BumpStep {
  next: (old: DemandEntry | undefined, nowMs: number) => DemandEntry;
  resolve: (value: DemandEntry) => void;
  reject: (err: unknown) => void;
}
