// The GPU model of a fixed-model engine (vLLM, llama.cpp server, SGLang): one model, loaded at
// start and never unloaded, `slots` concurrent sequences, and a KV cache of `kvCapacityTokens`
// tokens. A request is admitted in arrival order (first come, first served) when a slot is free
// and the cache can hold its prompt and its planned answer; otherwise it waits, and everything
// behind it waits too. The cache in use is the prompt and the tokens generated so far of the
// running requests. Timing is the Ollama personality's: prompt at promptTokensPerS, then one
// token every 1000 / tokensPerS ms; the prompt tokens its prompt cache holds are not evaluated
// (llama.cpp: one cache per slot; vLLM and SGLang: one prefix cache for the copy, as large as the
// KV cache; docs/rules/engines.md "Prompt caches"). No I/O: time comes from the injected Clock.
import type { ModelSpec } from "../catalog.js";
import type { Clock, TimerHandle } from "../clock.js";
import type {
  EmulatorGpu,
  GpuSnapshot,
  JobObserver,
  JobResult,
  JobSpec,
  RunnerSnapshot,
  SubmitResult,
} from "../gpu-types.js";
import {
  EMPTY_CHAIN,
  extendChain,
  PrefixTree,
  type PromptChain,
  reusable,
  SlotCaches,
} from "../prompt-cache.js";

export interface FixedGpuConfig {
  vramMiB: number;
  /** VRAM the engine takes at start (weights and its KV cache), MiB. */
  usedMiB: number;
  slots: number;
  kvCapacityTokens: number;
  /** The engine's context limit (vLLM max_model_len, llama.cpp n_ctx, SGLang context length). */
  contextLength: number;
  tokensPerS: number;
  promptTokensPerS: number;
  maxQueue: number;
  /** Where prompts are cached: per slot (llama.cpp), or one prefix cache for the copy (vLLM, SGLang). */
  promptCache: "slots" | "prefix";
}

interface Job {
  id: number;
  spec: JobSpec;
  observer: JobObserver;
  arrivedAt: number;
  state: "waiting" | "running" | "done";
  /** KV tokens reserved at admission: prompt plus the planned answer. */
  need: number;
  slot: number;
  /** Prompt tokens reused from the prompt cache. */
  cachedTokens: number;
  startedAt?: number;
  promptDoneAt?: number;
  emitted: number;
  timer?: TimerHandle;
}

/** One running request as llama.cpp's /slots shows it. */
export interface SlotView {
  id: number;
  taskId: number;
  processing: boolean;
  promptTokens: number;
  decoded: number;
  remaining: number;
}

export class FixedModelGpu implements EmulatorGpu {
  private waiting: Job[] = [];
  private readonly running = new Set<Job>();
  private nextId = 1;
  private reserved = 0;
  private promptTotal = 0;
  private generatedTotal = 0;
  private requestTotal = 0;
  /** The most tokens one request held (prompt and output), llama.cpp's n_tokens_max. */
  private maxTokens = 0;
  private readonly slotCaches: SlotCaches | undefined;
  private readonly prefixCache: PrefixTree | undefined;

  constructor(
    readonly spec: ModelSpec,
    readonly config: FixedGpuConfig,
    private readonly clock: Clock,
  ) {
    if (config.promptCache === "slots") this.slotCaches = new SlotCaches(config.slots);
    else this.prefixCache = new PrefixTree(config.kvCapacityTokens);
  }

  effectiveNumCtx(): number {
    return this.config.contextLength;
  }

  runningCount(): number {
    return this.running.size;
  }

  waitingCount(): number {
    return this.waiting.length;
  }

  /** KV tokens held by running requests: their prompts and what they generated so far. */
  kvUsedTokens(): number {
    let n = 0;
    for (const j of this.running) n += j.spec.promptTokens + j.emitted;
    return n;
  }

  kvUsage(): number {
    return Math.min(1, this.kvUsedTokens() / this.config.kvCapacityTokens);
  }

  /** Prompt and generated tokens processed since start (the engines' counters). */
  totals(): { promptTokens: number; generatedTokens: number; requests: number; maxTokens: number } {
    return {
      promptTokens: this.promptTotal,
      generatedTokens: this.generatedTotal,
      requests: this.requestTotal,
      maxTokens: this.maxTokens,
    };
  }

  slotViews(): SlotView[] {
    const bySlot = new Map<number, Job>();
    for (const j of this.running) bySlot.set(j.slot, j);
    return Array.from({ length: this.config.slots }, (_, id) => {
      const j = bySlot.get(id);
      return {
        id,
        taskId: j ? j.id : -1,
        processing: j !== undefined,
        promptTokens: j ? j.spec.promptTokens : 0,
        decoded: j ? j.emitted : 0,
        remaining: j ? j.spec.outputTokens - j.emitted : -1,
      };
    });
  }

  submit(spec: JobSpec, observer: JobObserver): SubmitResult {
    if (spec.model !== this.spec.name) {
      return { ok: false, status: 404, message: `The model \`${spec.model}\` does not exist.` };
    }
    if (this.waiting.length >= this.config.maxQueue) {
      return { ok: false, status: 503, message: "server busy, please try again later" };
    }
    const job: Job = {
      id: this.nextId++,
      spec,
      observer,
      arrivedAt: this.clock.now(),
      state: "waiting",
      // A request larger than the whole cache would wait forever: it gets the whole cache.
      need: Math.min(this.config.kvCapacityTokens, spec.promptTokens + spec.outputTokens),
      slot: -1,
      cachedTokens: 0,
      emitted: 0,
    };
    if (spec.kind === "load") {
      job.state = "done";
      observer.onDone(this.result(job));
      return { ok: true, job: { id: job.id, cancel: () => {} } };
    }
    this.waiting.push(job);
    this.admit();
    return { ok: true, job: { id: job.id, cancel: () => this.cancel(job) } };
  }

  expire(): boolean {
    return false;
  }

  /** Fails every request at once; the model stays loaded. */
  reset(message = "emulator reset"): void {
    const jobs = [...this.waiting, ...this.running];
    for (const j of this.running) this.keepCache(j, false);
    this.waiting = [];
    this.running.clear();
    this.reserved = 0;
    for (const j of jobs) {
      j.timer?.cancel();
      j.state = "done";
    }
    for (const j of jobs) j.observer.onError(message, 500);
  }

  resident(): RunnerSnapshot[] {
    const c = this.config;
    const weights = Math.ceil(this.spec.weightsMiB);
    return [
      {
        model: this.spec.name,
        state: "ready",
        numCtx: c.contextLength,
        footprintMiB: c.usedMiB,
        weightsMiB: weights,
        kvMiB: Math.max(0, c.usedMiB - weights),
        active: this.running.size,
        waiting: this.waiting.length,
        keepAliveMs: Number.POSITIVE_INFINITY,
        expiresAt: Number.POSITIVE_INFINITY,
        loadStartedAt: 0,
        readyAt: 0,
        digest: this.spec.digest,
        spec: this.spec,
      },
    ];
  }

  snapshot(): GpuSnapshot {
    const c = this.config;
    return {
      now: this.clock.now(),
      vramMiB: c.vramMiB,
      usedMiB: c.usedMiB,
      freeMiB: c.vramMiB - c.usedMiB,
      numParallel: c.slots,
      defaultContextLength: c.contextLength,
      runners: this.resident(),
      pending: [],
      activeCount: this.running.size,
      queueDepth: this.waiting.length,
    };
  }

  /** Starts waiting requests in order while a slot and room in the cache are free. */
  private admit(): void {
    const started: Job[] = [];
    while (this.waiting.length > 0 && this.running.size < this.config.slots) {
      const head = this.waiting[0] as Job;
      if (this.reserved + head.need > this.config.kvCapacityTokens) break;
      this.waiting.shift();
      this.reserved += head.need;
      head.state = "running";
      this.running.add(head);
      this.start(head);
      started.push(head);
    }
    for (const j of started) if (j.state === "running") j.observer.onStart?.();
  }

  private freeSlot(): number {
    const used = new Set([...this.running].map((j) => j.slot));
    let id = 0;
    while (used.has(id)) id++;
    return id;
  }

  private perTokenMs(): number {
    return 1000 / (this.spec.tokensPerS ?? this.config.tokensPerS);
  }

  private dueOf(job: Job, k: number): number {
    const stall = job.spec.stall;
    const extra = stall && k > stall.afterTokens ? stall.ms : 0;
    return (job.promptDoneAt as number) + k * this.perTokenMs() + extra;
  }

  /** The slot a request runs in, and the prompt tokens its cache lets it reuse. */
  private takeCache(job: Job, now: number): void {
    const chain = job.spec.cache?.chain;
    let shared = 0;
    if (this.slotCaches) {
      // llama.cpp's slot choice: the free slot whose cache shares the most with the prompt.
      const taken = this.slotCaches.take(chain ?? EMPTY_CHAIN);
      job.slot = taken?.slot ?? this.freeSlot();
      shared = chain ? (taken?.shared ?? 0) : 0;
    } else {
      job.slot = this.freeSlot();
      shared = chain && this.prefixCache ? this.prefixCache.lookup(chain, now) : 0;
    }
    job.cachedTokens = reusable(shared, job.spec.promptTokens);
  }

  /** What the prompt cache keeps of a request: its prompt, and its answer when it ran to the end. */
  private keepCache(job: Job, complete: boolean): void {
    const cache = job.spec.cache;
    const chain: PromptChain = !cache
      ? EMPTY_CHAIN
      : complete && cache.answer
        ? extendChain(cache.chain, [cache.answer])
        : cache.chain;
    const now = this.clock.now();
    if (this.slotCaches) this.slotCaches.release(job.slot, chain, now);
    else if (cache) this.prefixCache?.insert(chain, now);
  }

  private start(job: Job): void {
    const now = this.clock.now();
    job.startedAt = now;
    this.takeCache(job, now);
    job.promptDoneAt =
      now + ((job.spec.promptTokens - job.cachedTokens) / this.config.promptTokensPerS) * 1000;
    this.promptTotal += job.spec.promptTokens;
    this.requestTotal++;
    this.schedule(job);
  }

  private schedule(job: Job): void {
    const total = job.spec.outputTokens;
    const at = job.emitted >= total ? (job.promptDoneAt as number) : this.dueOf(job, job.emitted + 1);
    if (at === Number.POSITIVE_INFINITY) return; // stalled until cancelled
    job.timer = this.clock.at(Math.max(at, this.clock.now()), () => this.emitDue(job));
  }

  private emitDue(job: Job): void {
    if (job.state !== "running") return;
    job.timer = undefined;
    const now = this.clock.now();
    const first = job.emitted;
    while (job.emitted < job.spec.outputTokens && this.dueOf(job, job.emitted + 1) <= now + 1e-9)
      job.emitted++;
    this.generatedTotal += job.emitted - first;
    this.maxTokens = Math.max(this.maxTokens, job.spec.promptTokens + job.emitted);
    if (job.emitted > first) {
      job.observer.onTokens?.(first, job.emitted - first);
      if (job.state !== "running") return; // the observer cancelled it
    }
    if (job.emitted >= job.spec.outputTokens) this.finish(job);
    else this.schedule(job);
  }

  private result(job: Job): JobResult {
    const now = this.clock.now();
    const startedAt = job.startedAt ?? now;
    const promptEvalMs =
      job.startedAt === undefined
        ? 0
        : ((job.spec.promptTokens - job.cachedTokens) / this.config.promptTokensPerS) * 1000;
    const stall = job.spec.stall;
    const stallMs = stall && job.emitted > stall.afterTokens && Number.isFinite(stall.ms) ? stall.ms : 0;
    const evalMs = job.emitted * this.perTokenMs() + stallMs;
    const loadMs = Math.max(0, startedAt - job.arrivedAt);
    return {
      loadMs,
      promptEvalMs,
      evalMs,
      totalMs: Math.max(now - job.arrivedAt, loadMs + promptEvalMs + evalMs),
      promptTokens: job.startedAt === undefined ? 0 : job.spec.promptTokens,
      cachedTokens: job.cachedTokens,
      evalTokens: job.emitted,
      coldLoad: false,
    };
  }

  private release(job: Job, complete = false): void {
    if (!this.running.delete(job)) return;
    this.reserved -= job.need;
    this.keepCache(job, complete);
  }

  private finish(job: Job): void {
    this.release(job, true);
    job.state = "done";
    const result = this.result(job);
    this.admit();
    job.observer.onDone(result);
  }

  private cancel(job: Job): void {
    if (job.state === "done") return;
    const was = job.state;
    job.state = "done";
    job.timer?.cancel();
    job.timer = undefined;
    if (was === "waiting") this.waiting = this.waiting.filter((j) => j !== job);
    else this.release(job);
    this.admit();
  }
}
