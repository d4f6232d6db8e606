// The discussion binder (docs/rules/binding.md §9): the second driver of the one binding
// algorithm. It learns live threads from the discussion events (`kubemoot.discussion.<ns>.<thread>.open`
// / `.close`: sidecars at Commit and EndThread, or runtimes themselves), binds their phases with
// `bindDiscussions` over the reconciler's latest snapshot (provider states applied), and
// publishes one value per (thread, phase) in kubemoot_discussion_bindings. It binds again on
// every snapshot (a provider joined, dropped or went not-ready, a resident changed) and on every
// new thread; hysteresis comes from each thread's published binding. A value is written when
// it changes (its revision + 1), and rewritten unchanged every DISCUSSION_BINDING_REFRESH_MS so
// the bucket's TTL only ever removes abandoned threads; a thread not opened again within the
// TTL is dropped. Runs never overlap: changes during a run are batched into the next.
import {
  type BindOptions,
  type BoundPhase,
  bindDiscussions,
  type ClusterSnapshot,
  type DiscussionResult,
  type DiscussionThread,
  discussionInputKey,
  type PhaseAssignment,
} from "../../binding/index.js";
import type { Logger } from "../../log/index.js";
import {
  DISCUSSION_BINDING_REFRESH_MS,
  DISCUSSION_EVENTS_FILTER,
  DISCUSSION_PHASES,
  type DiscussionBinding,
  type DiscussionBindings,
  decodeDiscussionEvent,
  MAX_DISCUSSION_CANDIDATES,
  type MessageBus,
} from "../../state/index.js";

export interface DiscussionBinderOptions {
  bus: MessageBus;
  bindings: DiscussionBindings;
  /** The binder's settings besides the clock (as the reconciler's). */
  bind?: Omit<BindOptions, "now">;
  logger: Logger;
  now?: () => Date;
  /** A thread not opened again for this long is dropped (ms); default 30 min, the bucket's TTL. */
  threadTtlMs?: number;
  /** Most live threads at once; newer ones beyond are refused with a warning. Default 10 000. */
  maxThreads?: number;
  /** How often expiry and refresh run (ms); default 60 000. */
  sweepMs?: number;
}

interface LiveThread {
  agent: string;
  seenAtMs: number;
  published: Partial<Record<BoundPhase, { value: DiscussionBinding; writtenAtMs: number }>>;
}

const DEFAULT_THREAD_TTL_MS = 30 * 60_000;
const DEFAULT_MAX_THREADS = 10_000;

export class DiscussionBinder {
  private readonly threads = new Map<string, LiveThread>();
  private snapshot: ClusterSnapshot | undefined;
  private snapshotKey = "";
  private binds = 0;
  private failing: ReadonlySet<string> = new Set();
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;
  private sweep: NodeJS.Timeout | undefined;
  private readonly now: () => Date;
  private readonly ttlMs: number;
  private readonly maxThreads: number;

  constructor(private readonly o: DiscussionBinderOptions) {
    this.now = o.now ?? (() => new Date());
    this.ttlMs = o.threadTtlMs ?? DEFAULT_THREAD_TTL_MS;
    this.maxThreads = o.maxThreads ?? DEFAULT_MAX_THREADS;
  }

  start(): void {
    this.unsubscribe = this.o.bus.subscribe(DISCUSSION_EVENTS_FILTER, (subject, data) =>
      this.onMessage(subject, data),
    );
    this.sweep = setInterval(() => this.expire(), this.o.sweepMs ?? 60_000);
    this.sweep.unref();
  }

  /**
   * The reconciler's latest snapshot: every live thread is bound again over it, unless it says
   * nothing new to a thread (a provider's heartbeat, an Agent's status written).
   */
  setSnapshot(snapshot: ClusterSnapshot): void {
    const key = discussionInputKey(snapshot);
    this.snapshot = snapshot;
    if (key === this.snapshotKey) return;
    this.snapshotKey = key;
    this.schedule();
  }

  /**
   * Providers whose latest probe failed (the publisher's): not ready for discussions from the
   * first failure, where the provider state waits for the threshold (a thread waiting three
   * probes for a dead GPU would send its calls nowhere meanwhile). A blip moves a thread once:
   * going back needs the hysteresis margin.
   */
  setFailingProviders(names: ReadonlySet<string>): void {
    if (names.size === this.failing.size && [...names].every((n) => this.failing.has(n))) return;
    this.failing = new Set(names);
    this.schedule();
  }

  /** How many times every live thread was bound (one bindDiscussions each). */
  get bindRuns(): number {
    return this.binds;
  }

  /** Live threads now. */
  get size(): number {
    return this.threads.size;
  }

  /** Resolves once no run is in flight or queued (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.sweep) clearInterval(this.sweep);
    await this.settled();
  }

  private onMessage(subject: string, data: Uint8Array): void {
    const { event, reason } = decodeDiscussionEvent(subject, data);
    if (event === undefined) {
      this.o.logger.warn({ subject: subject.slice(0, 200), reason }, "discussion binder: event skipped");
      return;
    }
    const t = this.threads.get(event.threadId);
    if (event.kind === "close") {
      // Only the thread's own agent ends it (the subject's namespace guards only the namespace).
      if (!t || t.agent !== event.agent) return;
      this.threads.delete(event.threadId);
      this.o.bindings
        .remove(event.threadId)
        .catch((err: unknown) =>
          this.o.logger.warn(
            { err: String(err), thread: event.threadId },
            "discussion binder: remove failed",
          ),
        );
      return;
    }
    if (t) {
      // Another agent cannot take a live thread over: its id is the first opener's.
      if (t.agent === event.agent) t.seenAtMs = this.now().getTime();
      return;
    }
    if (this.threads.size >= this.maxThreads) {
      this.o.logger.warn(
        { thread: event.threadId, max: this.maxThreads },
        "discussion binder: too many live threads",
      );
      return;
    }
    this.threads.set(event.threadId, { agent: event.agent, seenAtMs: this.now().getTime(), published: {} });
    this.schedule();
  }

  /** Drops expired threads; binds again only when one went (the load terms change) or a refresh is due. */
  private expire(): void {
    const now = this.now().getTime();
    let dropped = false;
    let due = false;
    for (const [id, t] of this.threads) {
      if (now - t.seenAtMs > this.ttlMs) {
        this.threads.delete(id);
        this.o.bindings.remove(id).catch(() => undefined);
        dropped = true;
      } else if (!due) {
        due = Object.values(t.published).some(
          (p) => p === undefined || now - p.writtenAtMs >= DISCUSSION_BINDING_REFRESH_MS,
        );
      }
    }
    if (dropped || due) this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.again = true;
    if (!this.running) this.running = this.loop();
  }

  private async loop(): Promise<void> {
    try {
      while (this.again && !this.stopped) {
        this.again = false;
        try {
          await this.run();
        } catch (err) {
          this.o.logger.error({ err: String(err) }, "discussion binder: run failed");
        }
      }
    } finally {
      // In the same turn as the last check: a change that comes after it starts a new loop.
      this.running = undefined;
    }
  }

  private async run(): Promise<void> {
    if (!this.snapshot || this.threads.size === 0) return;
    this.binds++;
    const now = this.now();
    const threads: DiscussionThread[] = [...this.threads].map(([threadId, t]) => ({
      threadId,
      agent: t.agent,
      current: currentOf(t),
    }));
    const results = bindDiscussions(withoutFailing(this.snapshot, this.failing), threads, {
      ...this.o.bind,
      now,
    });
    const writes: Promise<unknown>[] = [];
    for (const r of results) {
      const t = this.threads.get(r.threadId);
      if (!t) continue;
      const before = t.published[r.phase];
      const next = bindingValue(r, before?.value, now);
      const changed = before === undefined || !sameBinding(before.value, next);
      if (!changed && now.getTime() - before.writtenAtMs < DISCUSSION_BINDING_REFRESH_MS) continue;
      const value = changed ? next : before.value;
      t.published[r.phase] = { value, writtenAtMs: now.getTime() };
      if (changed) {
        this.o.logger.info(
          {
            thread: r.threadId,
            phase: r.phase,
            model: value.model,
            provider: value.provider,
            revision: value.revision,
          },
          `discussion binder: ${value.reason}`,
        );
      }
      writes.push(
        this.o.bindings.publish(value).catch((err: unknown) => {
          // Written again by the next run: the value it holds is not what the bucket holds.
          delete t.published[r.phase];
          this.o.logger.warn({ err: String(err), thread: r.threadId }, "discussion binder: publish failed");
        }),
      );
    }
    await Promise.all(writes);
  }
}

/** What the thread's phases are bound to now (hysteresis). */
function currentOf(t: LiveThread): DiscussionThread["current"] {
  const out: Partial<Record<BoundPhase, PhaseAssignment>> = {};
  for (const phase of DISCUSSION_PHASES) {
    const v = t.published[phase]?.value;
    if (v?.kind === "binding" && v.model && v.provider && v.endpoint !== undefined) {
      out[phase] = {
        model: v.model,
        provider: v.provider,
        endpoint: v.endpoint,
        ...(v.modelRef ? { modelRef: v.modelRef } : {}),
      };
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The value to publish for a result, given what was published before (its revision, its reason). */
function bindingValue(
  r: DiscussionResult,
  before: DiscussionBinding | undefined,
  now: Date,
): DiscussionBinding {
  const revision = (before?.revision ?? 0) + 1;
  const base = {
    v: 1 as const,
    thread: r.threadId,
    phase: r.phase,
    agent: r.agent,
    candidates: r.candidates
      .slice(0, MAX_DISCUSSION_CANDIDATES)
      .map((c) => ({ model: c.model, score: c.score })),
    revision,
    boundAt: now.toISOString(),
  };
  const b = r.binding;
  if (!b) {
    const reason = r.unschedulable ?? "unschedulable";
    return {
      ...base,
      kind: "unschedulable",
      reason,
      conditions: [{ type: "Scheduled", status: "False", reason: "Unschedulable", message: reason }],
    };
  }
  return {
    ...base,
    kind: "binding",
    model: b.model,
    modelRef: b.modelRef,
    provider: b.provider,
    endpoint: b.endpoint,
    engine: b.engine,
    score: b.score,
    reason: reasonOf(b.provider, b.model, before, b.fallback === true),
  };
}

function reasonOf(
  provider: string,
  model: string,
  before: DiscussionBinding | undefined,
  fallback: boolean,
): string {
  const to = `${model} on ${provider}${fallback ? " (triage took the mulling pick)" : ""}`;
  if (before === undefined) return `bound to ${to}`;
  if (before.kind === "unschedulable") return `bound to ${to}: it was unschedulable`;
  if (before.provider !== provider || before.model !== model)
    return `rebound from ${before.model} on ${before.provider} to ${to}`;
  return `bound to ${to}`;
}

/** Whether two values say the same thing to a reader (revision, time and wording aside). */
function sameBinding(a: DiscussionBinding, b: DiscussionBinding): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "unschedulable") return a.reason === b.reason;
  return (
    a.model === b.model &&
    a.provider === b.provider &&
    a.endpoint === b.endpoint &&
    a.engine === b.engine &&
    JSON.stringify(a.candidates) === JSON.stringify(b.candidates)
  );
}

/** The snapshot with the failing providers not ready. */
function withoutFailing(s: ClusterSnapshot, failing: ReadonlySet<string>): ClusterSnapshot {
  if (failing.size === 0) return s;
  const providers = s.providers.map((p) =>
    failing.has(p.name) && p.status.ready ? { ...p, status: { ...p.status, ready: false } } : p,
  );
  return { ...s, providers };
}
