// The emulated GPU's shapes as its callers see them (src/emulator/gpu.ts holds the behaviour):
// its configuration, a request (job) with its observer and result, and the snapshots the admin
// API, the DCGM exporter and the simulation read.
import type { ModelSpec } from "./catalog.js";
import type { PromptChain, PromptPart } from "./prompt-cache.js";

export interface GpuConfig {
  vramMiB: number;
  numParallel: number;
  /** Default num_ctx (OLLAMA_CONTEXT_LENGTH); 0 = Ollama's VRAM-based default. */
  contextLength: number;
  loadMiBPerS: number;
  unloadMs: number;
  tokensPerS: number;
  promptTokensPerS: number;
  maxQueue: number;
  /** 0 = unlimited. */
  maxLoadedModels: number;
  /** Default keep_alive in ms; Infinity = forever. */
  keepAliveMs: number;
}

export interface JobSpec {
  model: string;
  /** Effective num_ctx (see OllamaGpu.effectiveNumCtx). */
  numCtx: number;
  /** The request's keep_alive in ms (Infinity = forever); undefined = the default. */
  keepAliveMs?: number | undefined;
  /** "load": only make the model resident (no slot taken); "infer": evaluate and generate. */
  kind: "infer" | "load";
  promptTokens: number;
  outputTokens: number;
  /** Fault: after this many tokens, pause for `ms` (Infinity = until cancelled). */
  stall?: { afterTokens: number; ms: number } | undefined;
  /**
   * The prompt as a prompt cache sees it (prompt-cache.ts), and the answer as the next turn of
   * the conversation will send it back; absent: nothing is cached or reused.
   */
  cache?: { chain: PromptChain; answer?: PromptPart | undefined } | undefined;
}

export interface JobResult {
  /** Arrival → runner ready for this request (queueing for placement and any load). */
  loadMs: number;
  promptEvalMs: number;
  evalMs: number;
  totalMs: number;
  promptTokens: number;
  /** Prompt tokens reused from the prompt cache (not evaluated, not in promptEvalMs). */
  cachedTokens: number;
  evalTokens: number;
  /** True when this request's placement loaded (or reloaded) the model. */
  coldLoad: boolean;
}

export interface JobObserver {
  /** The request got its slot and prompt evaluation began. */
  onStart?(): void;
  /** Tokens [first, first + count) were generated. */
  onTokens?(first: number, count: number): void;
  onDone(result: JobResult): void;
  onError(message: string, status: number): void;
}

export interface JobHandle {
  readonly id: number;
  cancel(): void;
}

export type SubmitResult = { ok: true; job: JobHandle } | { ok: false; status: number; message: string };

export type RunnerState = "loading" | "ready" | "unloading";

export interface RunnerSnapshot {
  model: string;
  state: RunnerState;
  numCtx: number;
  footprintMiB: number;
  weightsMiB: number;
  kvMiB: number;
  active: number;
  waiting: number;
  /** ms; Infinity = forever. */
  keepAliveMs: number;
  /** Emulated ms; Infinity = never. */
  expiresAt: number;
  loadStartedAt: number;
  readyAt: number | undefined;
  digest: string;
  spec: ModelSpec;
}

export interface PendingSnapshot {
  id: number;
  model: string;
  numCtx: number;
  kind: JobSpec["kind"];
  arrivedAt: number;
}

export interface GpuSnapshot {
  now: number;
  vramMiB: number;
  usedMiB: number;
  freeMiB: number;
  numParallel: number;
  defaultContextLength: number;
  runners: RunnerSnapshot[];
  pending: PendingSnapshot[];
  /** Requests holding a slot. */
  activeCount: number;
  /** Requests waiting for placement or a slot. */
  queueDepth: number;
}

/**
 * What the HTTP handlers need from a GPU model: Ollama's (OllamaGpu) or a fixed-model engine's
 * (engines/fixed-gpu.ts).
 */
export interface EmulatorGpu {
  effectiveNumCtx(model: string, requested?: number): number;
  submit(spec: JobSpec, observer: JobObserver): SubmitResult;
  /** keep_alive 0 without a prompt; a fixed-model engine never unloads (false). */
  expire(model: string): boolean;
  reset(message?: string): void;
  snapshot(): GpuSnapshot;
  resident(): RunnerSnapshot[];
}
