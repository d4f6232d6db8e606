// The model of one Ollama server on one GPU: runners (loaded models), their slots, the
// scheduler's in-order queue, loads, unloads, keep_alive expiry and eviction. No I/O: time
// comes from an injected Clock and results go to per-job observers, so the HTTP layer and a
// discrete-event simulation drive the very same logic.
//
// Behaviour (docs/rules/ollama.md):
// - Requests are placed strictly in arrival order. A request whose model is loaded with the
//   same num_ctx joins that runner and waits for one of its num_parallel slots (FIFO).
// - A model with a different num_ctx is reloaded: unloaded once idle, then loaded again.
// - An embedding model (no "completion" capability) always loads with one slot, as Ollama's
//   scheduler does.
// - A new model loads if its footprint fits in free VRAM and fewer than maxLoadedModels are
//   loaded; otherwise idle runners are evicted one at a time, shortest remaining keep_alive
//   first, and the request (and everything behind it) waits until it fits.
// - Loading takes weights / loadMiBPerS; unloading holds the VRAM for unloadMs.
// - An idle runner unloads when its keep_alive runs out (0: at once; Infinity: never).
// - Requests waiting for placement or for a slot count against maxQueue.

import { modelNotFoundMessage, OLLAMA_MAX_QUEUE_MESSAGE } from "../engines/index.js";
import { footprintMiB, kvSlabMiB, type ModelSpec, slotsFor } from "./catalog.js";
import type { Clock } from "./clock.js";
import type { Job, Runner } from "./gpu-runner.js";
import type {
  GpuConfig,
  GpuSnapshot,
  JobObserver,
  JobResult,
  JobSpec,
  RunnerSnapshot,
  SubmitResult,
} from "./gpu-types.js";
import { extendChain, reusable, SlotCaches } from "./prompt-cache.js";

export class OllamaGpu {
  private readonly runners = new Map<string, Runner>();
  private pending: Job[] = [];
  private nextId = 1;
  private processing = false;
  private reprocess = false;

  constructor(
    readonly config: GpuConfig,
    private readonly catalog: ReadonlyMap<string, ModelSpec>,
    private readonly clock: Clock,
    private readonly defaultContextLength: number,
  ) {}

  /** num_ctx a request gets: its own, else the configured default, clamped to [4, model max]. */
  effectiveNumCtx(model: string, requested?: number): number {
    const spec = this.catalog.get(model);
    const wanted = requested !== undefined && requested > 0 ? requested : this.defaultContextLength;
    const max = spec?.contextLength ?? wanted;
    return Math.max(4, Math.min(Math.floor(wanted), max));
  }

  /** Footprint the model would take with this num_ctx. */
  footprintFor(model: string, numCtx: number): number {
    const spec = this.catalog.get(model);
    return spec ? footprintMiB(spec, numCtx, slotsFor(spec, this.config.numParallel)) : 0;
  }

  queueDepth(): number {
    let n = this.pending.length;
    for (const r of this.runners.values()) n += r.waiting.length;
    return n;
  }

  activeCount(): number {
    let n = 0;
    for (const r of this.runners.values()) n += r.active.size;
    return n;
  }

  usedMiB(): number {
    let n = 0;
    for (const r of this.runners.values()) n += r.footprintMiB;
    return n;
  }

  submit(spec: JobSpec, observer: JobObserver): SubmitResult {
    if (!this.catalog.has(spec.model)) {
      return { ok: false, status: 404, message: modelNotFoundMessage(spec.model) };
    }
    if (this.queueDepth() >= this.config.maxQueue) {
      return { ok: false, status: 503, message: OLLAMA_MAX_QUEUE_MESSAGE };
    }
    const job: Job = {
      id: this.nextId++,
      spec,
      observer,
      arrivedAt: this.clock.now(),
      state: "pending",
      emitted: 0,
      coldLoad: false,
      cachedTokens: 0,
    };
    this.pending.push(job);
    this.process(job.arrivedAt);
    return { ok: true, job: { id: job.id, cancel: () => this.cancel(job) } };
  }

  /**
   * keep_alive 0 without a prompt: the model unloads once idle (at once if idle now).
   * Returns whether the model was resident.
   */
  expire(model: string): boolean {
    const r = this.runners.get(model);
    if (!r || r.state === "unloading") return false;
    r.keepAliveMs = 0;
    if (this.isIdle(r)) this.startUnload(r);
    return true;
  }

  /** Fails every request and drops every runner at once (no unload time). */
  reset(message = "emulator reset"): void {
    const jobs: Job[] = [...this.pending];
    this.pending = [];
    for (const r of this.runners.values()) {
      r.timer?.cancel();
      jobs.push(...r.waiting, ...r.active);
    }
    this.runners.clear();
    for (const j of jobs) {
      j.timer?.cancel();
      j.state = "done";
    }
    for (const j of jobs) j.observer.onError(message, 500);
  }

  snapshot(): GpuSnapshot {
    const now = this.clock.now();
    const runners = [...this.runners.values()].map((r) => this.runnerSnapshot(r, now));
    const used = this.usedMiB();
    return {
      now,
      vramMiB: this.config.vramMiB,
      usedMiB: used,
      freeMiB: this.config.vramMiB - used,
      numParallel: this.config.numParallel,
      defaultContextLength: this.defaultContextLength,
      runners,
      pending: this.pending.map((j) => ({
        id: j.id,
        model: j.spec.model,
        numCtx: j.spec.numCtx,
        kind: j.spec.kind,
        arrivedAt: j.arrivedAt,
      })),
      activeCount: this.activeCount(),
      queueDepth: this.queueDepth(),
    };
  }

  /** Loaded and loading models as /api/ps lists them (unloading ones are gone already). */
  resident(): RunnerSnapshot[] {
    const now = this.clock.now();
    return [...this.runners.values()]
      .filter((r) => r.state !== "unloading")
      .map((r) => this.runnerSnapshot(r, now));
  }

  private runnerSnapshot(r: Runner, now: number): RunnerSnapshot {
    return {
      model: r.spec.name,
      state: r.state,
      numCtx: r.numCtx,
      footprintMiB: r.footprintMiB,
      weightsMiB: Math.ceil(r.spec.weightsMiB),
      kvMiB: r.kvMiB,
      active: r.active.size,
      waiting: r.waiting.length,
      keepAliveMs: r.keepAliveMs,
      expiresAt: this.expiresAt(r, now),
      loadStartedAt: r.loadStartedAt,
      readyAt: r.readyAt,
      digest: r.spec.digest,
      spec: r.spec,
    };
  }

  private expiresAt(r: Runner, now: number): number {
    if (r.keepAliveMs === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
    if (r.state === "ready" && r.idleSince !== undefined) return r.idleSince + r.keepAliveMs;
    return now + r.keepAliveMs;
  }

  private isIdle(r: Runner): boolean {
    return r.state === "ready" && r.active.size === 0 && r.waiting.length === 0;
  }

  /**
   * Places pending requests in order. One pass reads the clock once (`now`, or the clock): the
   * emulator's own running time is not emulated time, so a request that arrives at a ready
   * model starts with no load time however long the host took to run this code.
   */
  private process(now = this.clock.now()): void {
    if (this.processing) {
      this.reprocess = true;
      return;
    }
    this.processing = true;
    try {
      do {
        this.reprocess = false;
        while (this.pending.length > 0) {
          const head = this.pending[0] as Job;
          if (!this.tryPlace(head, now)) break;
          if (this.pending[0] === head) this.pending.shift();
        }
      } while (this.reprocess);
    } finally {
      this.processing = false;
    }
  }

  /** Places the head request; false when it must wait (and everything behind it). */
  private tryPlace(job: Job, now: number): boolean {
    const { model, numCtx } = job.spec;
    const existing = this.runners.get(model);
    if (existing) {
      if (existing.state !== "unloading" && existing.numCtx === numCtx) {
        this.assign(job, existing, now);
        return true;
      }
      if (existing.state === "unloading") return false;
      // Different num_ctx: reload once the current runner is idle.
      if (this.isIdle(existing)) this.startUnload(existing);
      else existing.drain = true;
      return false;
    }
    const spec = this.catalog.get(model) as ModelSpec;
    const need = footprintMiB(spec, numCtx, slotsFor(spec, this.config.numParallel));
    if (need > this.config.vramMiB) {
      this.pending.shift();
      job.state = "done";
      job.observer.onError(
        `model requires more memory (${need} MiB) than the GPU has (${this.config.vramMiB} MiB)`,
        500,
      );
      return true;
    }
    const loaded = [...this.runners.values()].filter((r) => r.state !== "unloading").length;
    const underCap = this.config.maxLoadedModels <= 0 || loaded < this.config.maxLoadedModels;
    if (underCap && this.usedMiB() + need <= this.config.vramMiB) {
      this.startLoad(spec, numCtx, job, now);
      return true;
    }
    // Wait for an unload in progress to free its VRAM before choosing another victim.
    for (const r of this.runners.values()) if (r.state === "unloading") return false;
    const idle = [...this.runners.values()]
      .filter((r) => this.isIdle(r))
      .sort(
        (a, b) => this.expiresAt(a, now) - this.expiresAt(b, now) || a.spec.name.localeCompare(b.spec.name),
      );
    const victim = idle[0];
    if (victim) this.startUnload(victim);
    return false;
  }

  private startLoad(spec: ModelSpec, numCtx: number, job: Job, now: number): void {
    const runner: Runner = {
      spec,
      numCtx,
      footprintMiB: footprintMiB(spec, numCtx, slotsFor(spec, this.config.numParallel)),
      kvMiB: kvSlabMiB(spec, numCtx, slotsFor(spec, this.config.numParallel)),
      state: "loading",
      loadStartedAt: now,
      keepAliveMs: job.spec.keepAliveMs ?? this.config.keepAliveMs,
      active: new Set(),
      waiting: [],
      caches: new SlotCaches(slotsFor(spec, this.config.numParallel)),
      initiator: job,
      drain: false,
    };
    this.runners.set(spec.name, runner);
    job.coldLoad = true;
    const loadMs = (spec.weightsMiB / this.config.loadMiBPerS) * 1000;
    runner.timer = this.clock.at(now + loadMs, () => this.onLoaded(runner));
    this.assign(job, runner, now);
  }

  private onLoaded(runner: Runner): void {
    if (this.runners.get(runner.spec.name) !== runner || runner.state !== "loading") return;
    runner.state = "ready";
    runner.readyAt = this.clock.now();
    runner.timer = undefined;
    runner.initiator = undefined;
    for (const j of runner.waiting) j.readyAt = runner.readyAt;
    this.pump(runner);
    this.afterChange(runner);
  }

  private assign(job: Job, runner: Runner, now: number): void {
    job.state = "assigned";
    job.runner = runner;
    runner.keepAliveMs = job.spec.keepAliveMs ?? this.config.keepAliveMs;
    runner.idleSince = undefined;
    if (runner.state === "ready") {
      runner.timer?.cancel();
      runner.timer = undefined;
      job.readyAt = now;
    }
    runner.waiting.push(job);
    this.pump(runner);
  }

  /** Completes load-only requests and starts waiting requests on free slots, in order. */
  private pump(runner: Runner): void {
    if (runner.state !== "ready") return;
    const loads = runner.waiting.filter((j) => j.spec.kind === "load");
    if (loads.length > 0) runner.waiting = runner.waiting.filter((j) => j.spec.kind !== "load");
    const started: Job[] = [];
    const slots = slotsFor(runner.spec, this.config.numParallel);
    while (runner.waiting.length > 0 && runner.active.size < slots) {
      const job = runner.waiting.shift() as Job;
      runner.active.add(job);
      job.state = "running";
      this.startJob(job, runner);
      started.push(job);
    }
    for (const j of loads) {
      j.state = "done";
      j.observer.onDone(this.result(j, 0, 0));
    }
    for (const j of started) if (j.state === "running") j.observer.onStart?.();
  }

  /** Prompt tokens evaluated per second: the model's own rate, else the emulator's. */
  private promptRate(runner: Runner | undefined): number {
    return runner?.spec.promptTokensPerS ?? this.config.promptTokensPerS;
  }

  private perTokenMs(runner: Runner): number {
    return 1000 / (runner.spec.tokensPerS ?? this.config.tokensPerS);
  }

  private dueOf(job: Job, runner: Runner, k: number): number {
    const stall = job.spec.stall;
    const extra = stall && k > stall.afterTokens ? stall.ms : 0;
    return (job.promptDoneAt as number) + k * this.perTokenMs(runner) + extra;
  }

  private startJob(job: Job, runner: Runner): void {
    const now = this.clock.now();
    job.startedAt = now;
    const cache = job.spec.cache;
    const taken = cache ? runner.caches.take(cache.chain) : undefined;
    if (taken) {
      job.cacheSlot = taken.slot;
      job.cachedTokens = reusable(taken.shared, job.spec.promptTokens);
    }
    job.promptDoneAt = now + ((job.spec.promptTokens - job.cachedTokens) / this.promptRate(runner)) * 1000;
    this.scheduleNext(job, runner);
  }

  /** Frees the job's cache slot: it holds the prompt, and the answer when the job ran to its end. */
  private releaseCache(job: Job, runner: Runner, complete: boolean): void {
    if (job.cacheSlot === undefined || !job.spec.cache) return;
    const { chain, answer } = job.spec.cache;
    runner.caches.release(
      job.cacheSlot,
      complete && answer ? extendChain(chain, [answer]) : chain,
      this.clock.now(),
    );
    job.cacheSlot = undefined;
  }

  private scheduleNext(job: Job, runner: Runner): void {
    const total = job.spec.outputTokens;
    const at = job.emitted >= total ? (job.promptDoneAt as number) : this.dueOf(job, runner, job.emitted + 1);
    if (at === Number.POSITIVE_INFINITY) return; // stalled until cancelled
    job.timer = this.clock.at(Math.max(at, this.clock.now()), () => this.emitDue(job, runner));
  }

  private emitDue(job: Job, runner: Runner): void {
    if (job.state !== "running") return;
    job.timer = undefined;
    const now = this.clock.now();
    const total = job.spec.outputTokens;
    const first = job.emitted;
    while (job.emitted < total && this.dueOf(job, runner, job.emitted + 1) <= now + 1e-9) job.emitted++;
    if (job.emitted > first) {
      job.observer.onTokens?.(first, job.emitted - first);
      if (job.state !== "running") return; // the observer cancelled it
    }
    if (job.emitted >= total) this.finish(job, runner);
    else this.scheduleNext(job, runner);
  }

  private result(job: Job, promptTokens: number, evalTokens: number, runner?: Runner): JobResult {
    const now = this.clock.now();
    const loadMs = Math.max(0, (job.readyAt ?? now) - job.arrivedAt);
    const cachedTokens = Math.min(job.cachedTokens, promptTokens);
    const promptEvalMs = ((promptTokens - cachedTokens) / this.promptRate(runner ?? job.runner)) * 1000;
    const stall = job.spec.stall;
    const stallMs = stall && evalTokens > stall.afterTokens && Number.isFinite(stall.ms) ? stall.ms : 0;
    const evalMs = runner ? evalTokens * this.perTokenMs(runner) + stallMs : 0;
    const totalMs = Math.max(now - job.arrivedAt, loadMs + promptEvalMs + evalMs);
    return {
      loadMs,
      promptEvalMs,
      evalMs,
      totalMs,
      promptTokens,
      cachedTokens,
      evalTokens,
      coldLoad: job.coldLoad,
    };
  }

  private finish(job: Job, runner: Runner): void {
    this.releaseCache(job, runner, true);
    runner.active.delete(job);
    job.state = "done";
    const result = this.result(job, job.spec.promptTokens, job.emitted, runner);
    this.pump(runner);
    this.afterChange(runner);
    job.observer.onDone(result);
  }

  private cancel(job: Job): void {
    if (job.state === "done") return;
    const prev = job.state;
    job.state = "done";
    job.timer?.cancel();
    job.timer = undefined;
    if (prev === "pending") {
      this.pending = this.pending.filter((j) => j !== job);
      this.process();
      return;
    }
    const runner = job.runner;
    if (!runner) return;
    if (prev === "assigned") {
      runner.waiting = runner.waiting.filter((j) => j !== job);
      if (runner.state === "loading" && runner.initiator === job && runner.waiting.length === 0) {
        // Ollama aborts a load whose request went away; the VRAM comes back after the unload.
        this.startUnload(runner);
        this.process();
        return;
      }
    } else {
      this.releaseCache(job, runner, false);
      runner.active.delete(job);
      this.pump(runner);
    }
    this.afterChange(runner);
  }

  /** After a runner's work changed: start its keep_alive when idle, then place what waits. */
  private afterChange(runner: Runner): void {
    if (this.runners.get(runner.spec.name) === runner && this.isIdle(runner)) {
      runner.timer?.cancel();
      runner.timer = undefined;
      if (runner.drain || runner.keepAliveMs <= 0) {
        this.startUnload(runner);
      } else {
        const now = this.clock.now();
        runner.idleSince = now;
        if (Number.isFinite(runner.keepAliveMs)) {
          runner.timer = this.clock.at(now + runner.keepAliveMs, () => {
            if (this.runners.get(runner.spec.name) === runner && this.isIdle(runner))
              this.startUnload(runner);
          });
        }
      }
    }
    this.process();
  }

  private startUnload(runner: Runner): void {
    runner.timer?.cancel();
    runner.state = "unloading";
    runner.idleSince = undefined;
    runner.timer = this.clock.at(this.clock.now() + this.config.unloadMs, () => {
      if (this.runners.get(runner.spec.name) === runner) this.runners.delete(runner.spec.name);
      this.process();
    });
  }
}
