// The simulated Ollama of one GPU: the emulator's own scheduler model (src/emulator/gpu.ts,
// OllamaGpu) running on the simulation's virtual clock, so the simulation and the emulator
// follow the same rules by construction (load at ~1 GiB/s, unload 1 s, OLLAMA_NUM_PARALLEL
// slots with in-order queueing, keep_alive expiry, eviction of idle models, KV slab).
// This wrapper only watches it: after every change it diffs the runners and reports loads and
// unloads with their cause (our planned eviction, keep_alive expiry, or Ollama's own eviction),
// and it integrates the time the GPU had at least one request running.
import {
  type GpuConfig,
  type JobObserver,
  type JobResult,
  type JobSpec,
  kvSlabMiB,
  type ModelConfig,
  type ModelSpec,
  OllamaGpu,
  type PromptChain,
  type PromptPart,
  type RunnerSnapshot,
  resolveModel,
} from "../emulator/index.js";
import { type EventLoop, VirtualClock } from "./events.js";

/** Why a runner unloaded. */
export type UnloadCause = "planned" | "expired" | "evicted";

export interface OllamaListener {
  onLoadStart?(gpu: SimOllama, model: string, footprintMiB: number): void;
  onUnload?(gpu: SimOllama, model: string, cause: UnloadCause, footprintMiB: number): void;
  /** Anything about the runners changed (resident set, states, active counts). */
  onChange?(gpu: SimOllama): void;
}

export interface SimOllamaConfig {
  name: string;
  vramMiB: number;
  numParallel: number;
  /** OLLAMA_CONTEXT_LENGTH (num_ctx of every request). */
  contextLength: number;
  models: readonly ModelConfig[];
  /** Defaults as the emulator's: 1024 MiB/s, 1000 ms, 5 min, 3 models, 50 tok/s, 2000 tok/s. */
  loadMiBPerS?: number;
  unloadMs?: number;
  keepAliveMs?: number;
  maxLoadedModels?: number;
  tokensPerS?: number;
  promptTokensPerS?: number;
  maxQueue?: number;
}

/**
 * A catalog entry whose footprint at (numCtx, numParallel) is exactly `footprintMiB`: the KV
 * slab follows the emulator's default per-token size and the weights take the rest.
 */
export function modelWithFootprint(
  name: string,
  footprintMiB: number,
  numCtx: number,
  numParallel: number,
): ModelConfig {
  const probe = resolveModel({ name, onDiskMiB: footprintMiB });
  const slab = kvSlabMiB(probe, numCtx, numParallel);
  return { name, onDiskMiB: Math.max(1, footprintMiB - slab) };
}

interface RunnerSeen {
  state: RunnerSnapshot["state"];
  expiresAt: number;
  busy: number;
  footprintMiB: number;
}

export class SimOllama {
  readonly name: string;
  readonly gpu: OllamaGpu;
  readonly catalog: ReadonlyMap<string, ModelSpec>;
  readonly config: GpuConfig;
  private seen = new Map<string, RunnerSeen>();
  private readonly planned = new Set<string>();
  private busySince: number | undefined;
  private busyTotalMs = 0;
  private lastActive = 0;

  constructor(
    private readonly loop: EventLoop,
    cfg: SimOllamaConfig,
    private readonly listener: OllamaListener = {},
    epochMs = Date.UTC(2026, 0, 1),
  ) {
    this.name = cfg.name;
    const specs = cfg.models.map(resolveModel);
    this.catalog = new Map(specs.map((s) => [s.name, s]));
    this.config = {
      vramMiB: cfg.vramMiB,
      numParallel: cfg.numParallel,
      contextLength: cfg.contextLength,
      loadMiBPerS: cfg.loadMiBPerS ?? 1024,
      unloadMs: cfg.unloadMs ?? 1000,
      tokensPerS: cfg.tokensPerS ?? 50,
      promptTokensPerS: cfg.promptTokensPerS ?? 2000,
      maxQueue: cfg.maxQueue ?? 100_000,
      maxLoadedModels: cfg.maxLoadedModels ?? 3,
      keepAliveMs: cfg.keepAliveMs ?? 5 * 60_000,
    };
    const clock = new VirtualClock(loop, epochMs, () => this.observe());
    this.gpu = new OllamaGpu(this.config, this.catalog, clock, cfg.contextLength);
  }

  /** num_ctx every request gets (the configured context). */
  get numCtx(): number {
    return this.gpu.effectiveNumCtx("", this.config.contextLength);
  }

  /** Submits a request; undefined when Ollama refused it at once (then `observer.onError` ran). */
  submit(spec: Omit<JobSpec, "numCtx">, observer: JobObserver): { cancel(): void } | undefined {
    const numCtx = this.gpu.effectiveNumCtx(spec.model);
    const r = this.gpu.submit({ ...spec, numCtx }, observer);
    this.observe();
    if (!r.ok) {
      observer.onError(r.message, r.status);
      return undefined;
    }
    return r.job;
  }

  /** A request that runs for `durationMs` once it has a slot (prompt evaluation only). */
  run(model: string, durationMs: number, done: (r: JobResult) => void, failed: (m: string) => void): void {
    // promptTokens / promptTokensPerS seconds of work, no generated tokens: two timers a call.
    const promptTokens = Math.max(0, (durationMs / 1000) * this.config.promptTokensPerS);
    this.submit(
      { model, kind: "infer", promptTokens, outputTokens: 0 },
      { onDone: done, onError: (m) => failed(m) },
    );
  }

  /**
   * An agent loop's turn: its prompt evaluated (less what the slot's prompt cache holds) and its
   * answer generated, which the slot keeps after the prompt for the conversation's next turn.
   */
  runPrompt(
    model: string,
    p: { chain: PromptChain; answer: PromptPart; tokens: number; outputTokens: number },
    done: (r: JobResult) => void,
    failed: (m: string) => void,
  ): void {
    this.submit(
      {
        model,
        kind: "infer",
        promptTokens: p.tokens,
        outputTokens: p.outputTokens,
        cache: { chain: p.chain, answer: p.answer },
      },
      { onDone: done, onError: (m) => failed(m) },
    );
  }

  /** Unloads `model` once idle (POST /api/generate {model, keep_alive: 0}): our planned victim. */
  unload(model: string): boolean {
    this.planned.add(model);
    const was = this.gpu.expire(model);
    if (!was) this.planned.delete(model);
    this.observe();
    return was;
  }

  /** Loaded and loading models as /api/ps lists them. */
  ps(): RunnerSnapshot[] {
    return this.gpu.resident();
  }

  /** The runner of `model`, if any (unloading ones included). */
  runner(model: string): RunnerSnapshot | undefined {
    return this.gpu.snapshot().runners.find((r) => r.model === model);
  }

  /** Requests holding a slot. */
  get active(): number {
    return this.gpu.activeCount();
  }

  /** Virtual ms during which at least one request held a slot, up to now. */
  busyMs(): number {
    return this.busyTotalMs + (this.busySince !== undefined ? this.loop.now - this.busySince : 0);
  }

  /** Diffs the runners against the last look and reports what changed. */
  observe(): void {
    const now = this.loop.now;
    const snap = this.gpu.snapshot();
    const next = new Map<string, RunnerSeen>();
    let changed = false;
    for (const r of snap.runners) {
      const prev = this.seen.get(r.model);
      const cur: RunnerSeen = {
        state: r.state,
        expiresAt: r.expiresAt,
        busy: r.active + r.waiting,
        footprintMiB: r.footprintMiB,
      };
      next.set(r.model, cur);
      if (prev === undefined || (prev.state === "unloading" && r.state === "loading")) {
        changed = true;
        if (r.state === "loading") this.listener.onLoadStart?.(this, r.model, r.footprintMiB);
        continue;
      }
      if (prev.state !== r.state || prev.busy !== cur.busy) changed = true;
      if (prev.state !== "unloading" && r.state === "unloading") {
        let cause: UnloadCause;
        if (this.planned.delete(r.model)) cause = "planned";
        else if (prev.state === "ready" && prev.busy === 0 && now >= prev.expiresAt) cause = "expired";
        else cause = "evicted";
        this.listener.onUnload?.(this, r.model, cause, r.footprintMiB);
      }
    }
    for (const model of this.seen.keys()) if (!next.has(model)) changed = true;
    this.seen = next;
    const active = snap.activeCount;
    if (active !== this.lastActive) {
      changed = true;
      if (active > 0 && this.busySince === undefined) this.busySince = now;
      if (active === 0 && this.busySince !== undefined) {
        this.busyTotalMs += now - this.busySince;
        this.busySince = undefined;
      }
      this.lastActive = active;
    }
    if (changed) this.listener.onChange?.(this);
  }
}
