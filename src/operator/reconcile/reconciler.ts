// The operator's reconcile loop: on every relevant change, snapshot the source, overlay the
// publisher's provider states, run the pure `bind` and hand the result to the sink.
//
// When a reconcile runs:
// - on any change the source reports (debounced, so a burst becomes one run);
// - when the publisher hands in new provider states (setProviderStates);
// - every `retryMs` (30 s, UNSCHEDULABLE_RETRY_MS) while any agent has an unschedulable phase,
//   with a resync of the source first (the file source rescans);
// - after a failed write, with exponential backoff (from `errorBackoffMs` up to `retryMs`);
// - on reconcileNow().
// Runs never overlap: changes that arrive during a run are batched into the next one.
//
// Status memory: with a source whose objects carry no live status (files), the reconciler
// remembers each agent's last status and feeds it back into the next bind, so hysteresis and
// condition transition times work the same as on a cluster; the sink's restore() seeds it at
// start (policies' conditions likewise). lastUnschedulable.observedAt keeps the time the same (phase, reason, policy) was first
// observed, so that a retry which changes nothing writes nothing.
import {
  type Agent,
  applyProviderStates,
  type BindOptions,
  type BindResult,
  bind,
  type ClusterSnapshot,
  type Condition,
  type CrewSchedulingPolicy,
  UNSCHEDULABLE_RETRY_MS,
} from "../../binding/index.js";
import type { ProviderState } from "../../core/index.js";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { type Logger, silentLogger } from "../../log/index.js";
import type { AgentStatus, BindingSink, ManifestSource, ProviderInfo, SinkReport } from "../sources/index.js";

export const DEFAULT_RECONCILE_DEBOUNCE_MS = 50;
export const DEFAULT_ERROR_BACKOFF_MS = 1_000;

export interface ReconcilerOptions {
  source: ManifestSource;
  sink: BindingSink;
  /** The clock bind observes (conditions, lastUnschedulable.observedAt). Default: new Date(). */
  now?: () => Date;
  logger?: Logger;
  /** Retry interval while anything is unschedulable; default 30 s. */
  retryMs?: number;
  /** Debounce of change notifications; default 50 ms. */
  debounceMs?: number;
  /** First retry after a failed write (doubling up to retryMs); default 1 s. */
  errorBackoffMs?: number;
  /** The binder's settings besides the clock (strategy, concurrencyFactor, evictionOverheadMiB). */
  bind?: Omit<BindOptions, "now">;
  /** Provider states known at start (else none until setProviderStates). */
  providerStates?: readonly ProviderState[];
  /** Called with the provider list at start and whenever it changes (the provider publisher). */
  onProviders?: (providers: ProviderInfo[]) => void;
  /** Providers answering as another engine than declared (the publisher's), for their status. */
  engineMismatches?: () => ReadonlyMap<string, { declared: string; detected: string }>;
  /** Called after every reconcile (metrics, tests). */
  onResult?: (result: ReconcileResult) => void;
}

export interface ReconcileResult {
  /** 1 for the first run, then counting up. */
  run: number;
  at: Date;
  /** Why it ran, e.g. ["initial"] or ["manifests changed (file change)", "provider states"]. */
  reasons: string[];
  bind: BindResult;
  /** What was bound: the source's objects with the provider states applied (the discussion binder's input). */
  snapshot: ClusterSnapshot;
  report: SinkReport;
  /** Agents with at least one unschedulable phase. */
  unschedulableAgents: number;
  /** When the next run is scheduled without any change (retry or backoff); undefined: none. */
  retryInMs: number | undefined;
}

export interface Reconciler {
  /** The last completed reconcile. */
  readonly lastResult: ReconcileResult | undefined;
  /** Reconciles as soon as the current run (if any) ends; resolves with that run's result. */
  reconcileNow(reason?: string): Promise<ReconcileResult>;
  /** The publisher's probes; replaces the previous states and triggers a reconcile. */
  setProviderStates(states: readonly ProviderState[]): void;
  /** The ModelProviders of the source, for the provider publisher. */
  providers(): ProviderInfo[];
  /** Resolves once no run is in progress or pending (retry timers do not count). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

interface Waiter {
  resolve(r: ReconcileResult): void;
  reject(err: unknown): void;
}

interface Batch {
  reasons: string[];
  resync: boolean;
  waiters: Waiter[];
}

/** Starts the source, runs the first reconcile, and keeps reconciling until stop(). */
export async function startReconciler(options: ReconcilerOptions): Promise<Reconciler> {
  const r = new ReconcileLoop(options);
  await r.start();
  return r;
}

class ReconcileLoop implements Reconciler {
  private readonly source: ManifestSource;
  private readonly sink: BindingSink;
  private readonly now: () => Date;
  private readonly log: Logger;
  private readonly retryMs: number;
  private readonly debounceMs: number;
  private readonly errorBackoffMs: number;
  private readonly bindOptions: Omit<BindOptions, "now">;
  private readonly onProviders: ((p: ProviderInfo[]) => void) | undefined;
  private readonly onResult: ((r: ReconcileResult) => void) | undefined;
  private readonly engineMismatches: ReconcilerOptions["engineMismatches"];

  private states: readonly ProviderState[];
  private memory = new Map<string, AgentStatus>();
  private policyMemory = new Map<string, { conditions: Condition[] }>();
  private pending: Batch | undefined;
  private running: Promise<void> | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private runs = 0;
  private providersJson = "";
  private stopped = false;
  private last: ReconcileResult | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(o: ReconcilerOptions) {
    this.source = o.source;
    this.sink = o.sink;
    this.now = o.now ?? (() => new Date());
    this.log = o.logger ?? silentLogger;
    this.retryMs = positive(o.retryMs, UNSCHEDULABLE_RETRY_MS, "retryMs");
    this.debounceMs = nonNegative(o.debounceMs, DEFAULT_RECONCILE_DEBOUNCE_MS, "debounceMs");
    this.errorBackoffMs = positive(o.errorBackoffMs, DEFAULT_ERROR_BACKOFF_MS, "errorBackoffMs");
    this.bindOptions = o.bind ?? {};
    this.onProviders = o.onProviders;
    this.onResult = o.onResult;
    this.engineMismatches = o.engineMismatches;
    this.states = [...(o.providerStates ?? [])];
  }

  get lastResult(): ReconcileResult | undefined {
    return this.last;
  }

  async start(): Promise<void> {
    if (this.source.statusAuthority === "reconciler" && this.sink.restore) {
      const restored = await this.sink.restore();
      this.memory = restored.agents;
      this.policyMemory = restored.policies;
    }
    await this.source.start((reason) => this.trigger(reason, false));
    try {
      await this.reconcileNow("initial");
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  reconcileNow(reason = "requested"): Promise<ReconcileResult> {
    if (this.stopped) return Promise.reject(shuttingDown());
    return new Promise<ReconcileResult>((resolve, reject) => {
      this.trigger(reason, false, { resolve, reject }, true);
    });
  }

  setProviderStates(states: readonly ProviderState[]): void {
    this.states = [...states];
    this.trigger("provider states", false);
  }

  providers(): ProviderInfo[] {
    return this.source.providers();
  }

  idle(): Promise<void> {
    if (!this.running && !this.pending) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const batch = this.pending;
    this.pending = undefined;
    for (const w of batch?.waiters ?? []) w.reject(shuttingDown());
    await this.running?.catch(() => undefined);
    await this.source.stop();
    await this.sink.close?.();
    this.notifyIdle();
  }

  // ---- scheduling ----------------------------------------------------------------------

  private trigger(reason: string, resync: boolean, waiter?: Waiter, immediate = false): void {
    if (this.stopped) {
      waiter?.reject(shuttingDown());
      return;
    }
    this.pending ??= { reasons: [], resync: false, waiters: [] };
    const batch = this.pending;
    if (!batch.reasons.includes(reason)) batch.reasons.push(reason);
    batch.resync ||= resync;
    if (waiter) batch.waiters.push(waiter);
    if (this.running) return; // the running loop takes the batch when it ends
    if (immediate || this.debounceMs === 0) {
      if (this.debounceTimer) clearTimeout(this.debounceTimer);
      this.debounceTimer = undefined;
      this.kick();
    } else if (!this.debounceTimer) {
      this.debounceTimer = setTimeout(() => {
        this.debounceTimer = undefined;
        this.kick();
      }, this.debounceMs);
    }
  }

  private kick(): void {
    if (this.running || this.stopped) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.pending && !this.stopped) this.kick();
      else this.notifyIdle();
    });
  }

  private async drain(): Promise<void> {
    while (this.pending && !this.stopped) {
      const batch = this.pending;
      this.pending = undefined;
      if (this.debounceTimer) clearTimeout(this.debounceTimer);
      this.debounceTimer = undefined;
      try {
        const result = await this.runOnce(batch);
        for (const w of batch.waiters) w.resolve(result);
      } catch (err) {
        this.log.error({ err, reasons: batch.reasons }, "reconcile failed");
        this.failures += 1;
        this.scheduleRetry(this.backoffMs(), "after a failed reconcile", false);
        for (const w of batch.waiters) w.reject(err);
      }
    }
  }

  private notifyIdle(): void {
    if (this.running || this.pending) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private scheduleRetry(ms: number, reason: string, resync: boolean): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.trigger(reason, resync, undefined, true);
    }, ms);
  }

  private backoffMs(): number {
    const exp = Math.min(this.failures - 1, 30);
    return Math.min(this.retryMs, this.errorBackoffMs * 2 ** Math.max(0, exp));
  }

  // ---- one reconcile -------------------------------------------------------------------

  private async runOnce(batch: Batch): Promise<ReconcileResult> {
    if (batch.resync && this.source.resync) {
      try {
        await this.source.resync();
      } catch (err) {
        this.log.warn({ err }, "source resync failed; reconciling what is known");
      }
    }
    const now = this.now();
    const raw = this.source.snapshot();
    const remember = this.source.statusAuthority === "reconciler";
    const agents = remember ? raw.agents.map((a) => this.withMemory(a)) : raw.agents;
    const policies = remember ? raw.policies.map((p) => this.withPolicyMemory(p)) : raw.policies;
    const snapshot: ClusterSnapshot = {
      ...raw,
      agents,
      policies,
      providers: applyProviderStates(raw.providers, this.states),
    };
    const result = keepObservedAt(bind(snapshot, { ...this.bindOptions, now }), agents);
    const engineMismatches = this.engineMismatches?.();
    const report = await this.sink.write(result, {
      snapshot,
      providerStates: this.states,
      ...(engineMismatches ? { engineMismatches } : {}),
      now,
    });

    this.memory = new Map(result.agents.map((a) => [a.key, a.status]));
    this.policyMemory = new Map(
      result.policies.map((p) => [`${p.namespace}/${p.name}`, { conditions: p.status.conditions }]),
    );
    this.runs += 1;
    this.announceProviders();

    const unschedulableAgents = result.agents.filter((a) => a.unschedulable.length > 0).length;
    let retryInMs: number | undefined;
    if (report.failures.length > 0) {
      this.failures += 1;
      retryInMs = this.backoffMs();
      this.scheduleRetry(retryInMs, "retry after failed writes", false);
    } else {
      this.failures = 0;
      if (unschedulableAgents > 0) {
        retryInMs = this.retryMs;
        this.scheduleRetry(retryInMs, "unschedulable retry", true);
      } else if (this.retryTimer) {
        clearTimeout(this.retryTimer);
        this.retryTimer = undefined;
      }
    }

    const out: ReconcileResult = {
      run: this.runs,
      at: now,
      reasons: batch.reasons,
      bind: result,
      snapshot,
      report,
      unschedulableAgents,
      retryInMs,
    };
    this.last = out;
    const fields = {
      run: out.run,
      reasons: batch.reasons,
      agents: result.agents.length,
      unschedulableAgents,
      writes: report.writes,
      skipped: report.skipped,
      failures: report.failures.length,
      ...report.detail,
    };
    if (report.failures.length > 0) {
      this.log.warn({ ...fields, failed: report.failures.slice(0, 10) }, "reconciled with failed writes");
    } else if (report.writes > 0) this.log.info(fields, "reconciled");
    else this.log.debug(fields, "reconciled (nothing changed)");
    this.onResult?.(out);
    return out;
  }

  private withMemory(agent: Agent): Agent {
    const remembered = this.memory.get(`${agent.namespace}/${agent.name}`);
    return remembered ? { ...agent, status: remembered } : agent;
  }

  private withPolicyMemory(policy: CrewSchedulingPolicy): CrewSchedulingPolicy {
    const remembered = this.policyMemory.get(`${policy.namespace}/${policy.name}`);
    return remembered ? { ...policy, status: remembered } : policy;
  }

  private announceProviders(): void {
    if (!this.onProviders) return;
    const list = this.source.providers();
    const json = JSON.stringify(list);
    if (json === this.providersJson) return;
    this.providersJson = json;
    try {
      this.onProviders(list);
    } catch (err) {
      this.log.error({ err }, "onProviders listener failed");
    }
  }
}

/**
 * Keeps lastUnschedulable.observedAt of an agent whose (phase, reason, policy) did not change
 * since its input status: the first observation of an ongoing condition, so retries that
 * change nothing write nothing.
 */
export function keepObservedAt(result: BindResult, inputs: readonly Agent[]): BindResult {
  const previous = new Map(
    inputs.map((a) => [`${a.namespace}/${a.name}`, a.status?.scheduling?.lastUnschedulable]),
  );
  const agents = result.agents.map((a) => {
    const cur = a.status.scheduling.lastUnschedulable;
    const prev = previous.get(a.key);
    if (
      !cur ||
      !prev?.observedAt ||
      cur.observedAt === prev.observedAt ||
      cur.phase !== prev.phase ||
      cur.reason !== prev.reason ||
      cur.crewSchedulingPolicy !== prev.crewSchedulingPolicy
    ) {
      return a;
    }
    const lastUnschedulable = { ...cur, observedAt: prev.observedAt };
    return { ...a, status: { ...a.status, scheduling: { ...a.status.scheduling, lastUnschedulable } } };
  });
  return { ...result, agents };
}

function shuttingDown(): KubemootError {
  return new KubemootError(ErrorCode.ShuttingDown, "reconciler stopped");
}

function positive(v: number | undefined, dflt: number, field: string): number {
  const n = v ?? dflt;
  if (!Number.isFinite(n) || n <= 0) {
    throw new KubemootError(ErrorCode.InvalidArgument, `${field}: expected a number > 0, got ${n}`, {
      field,
    });
  }
  return n;
}

function nonNegative(v: number | undefined, dflt: number, field: string): number {
  const n = v ?? dflt;
  if (!Number.isFinite(n) || n < 0) {
    throw new KubemootError(ErrorCode.InvalidArgument, `${field}: expected a number ≥ 0, got ${n}`, {
      field,
    });
  }
  return n;
}
