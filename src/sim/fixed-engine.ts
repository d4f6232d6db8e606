// A simulated fixed-model engine (vLLM, llama.cpp's server, SGLang; docs/rules/engines.md): it
// serves the models it was started with and batches continuously. Up to `slots` requests run at
// once while their KV tokens fit the cache; each runs slower as more run beside it (the batch
// shares the GPU: speed 1 / (1 + slowdown · (running − 1)) of a request alone, so the batch's
// total throughput still grows); the rest wait in order. It never loads or unloads anything.
import type { JobResult, TimerHandle } from "../emulator/index.js";
import type { EventLoop } from "./events.js";

export interface SimFixedEngineConfig {
  name: string;
  engine: "vllm" | "llamacpp" | "sglang";
  /** The models it serves. */
  serves: readonly string[];
  /** Requests it runs at once (vLLM max_num_seqs, llama.cpp --parallel). */
  slots: number;
  /** KV cache size in tokens: a running request holds its prompt's tokens. */
  kvTokens: number;
  /** Per-request slowdown for each other request running beside it. */
  slowdown: number;
  contextLength: number;
  /** The card's VRAM (MiB), as a probe would report it; the engine preallocates it. */
  vramMiB: number;
}

interface Job {
  remainingMs: number;
  tokens: number;
  arrivedAt: number;
  startedAt: number;
  done: (r: JobResult) => void;
}

export class SimFixedEngine {
  readonly name: string;
  private readonly running: Job[] = [];
  private readonly waiting: Job[] = [];
  private kvUsed = 0;
  private lastAt = 0;
  private timer: TimerHandle | undefined;
  private busySince: number | undefined;
  private busyTotalMs = 0;

  constructor(
    private readonly loop: EventLoop,
    readonly config: SimFixedEngineConfig,
  ) {
    this.name = config.name;
  }

  serves(model: string): boolean {
    return this.config.serves.includes(model);
  }

  /** Requests running now. */
  get active(): number {
    return this.running.length;
  }

  /** Requests waiting for a slot or for KV room. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Fraction of the KV cache the running requests hold. */
  get kvUsage(): number {
    return Math.min(1, this.kvUsed / Math.max(1, this.config.kvTokens));
  }

  /** Virtual ms during which at least one request ran, up to now. */
  busyMs(): number {
    return this.busyTotalMs + (this.busySince !== undefined ? this.loop.now - this.busySince : 0);
  }

  /** A request of `durationMs` alone, holding `tokens` of KV while it runs. */
  run(
    model: string,
    durationMs: number,
    done: (r: JobResult) => void,
    failed: (m: string) => void,
    tokens = 0,
  ): void {
    if (!this.serves(model)) {
      failed(`model "${model}" is not served here`);
      return;
    }
    this.advance();
    const kv = Math.min(Math.max(0, tokens), this.config.kvTokens);
    this.waiting.push({
      remainingMs: Math.max(0, durationMs),
      tokens: kv,
      arrivedAt: this.loop.now,
      startedAt: 0,
      done,
    });
    this.admit();
    this.reschedule();
  }

  private speed(): number {
    return 1 / (1 + this.config.slowdown * Math.max(0, this.running.length - 1));
  }

  /** Moves every running request forward to now at the speed the batch had. */
  private advance(): void {
    const now = this.loop.now;
    const dt = now - this.lastAt;
    this.lastAt = now;
    if (dt <= 0 || this.running.length === 0) return;
    const s = this.speed();
    for (const j of this.running) j.remainingMs = Math.max(0, j.remainingMs - dt * s);
  }

  /** Starts waiting requests in order while a slot and KV room are free. */
  private admit(): void {
    while (this.waiting.length > 0 && this.running.length < this.config.slots) {
      const j = this.waiting[0]!;
      if (this.running.length > 0 && this.kvUsed + j.tokens > this.config.kvTokens) break;
      this.waiting.shift();
      j.startedAt = this.loop.now;
      this.kvUsed += j.tokens;
      this.running.push(j);
    }
    if (this.running.length > 0 && this.busySince === undefined) this.busySince = this.loop.now;
    if (this.running.length === 0 && this.busySince !== undefined) {
      this.busyTotalMs += this.loop.now - this.busySince;
      this.busySince = undefined;
    }
  }

  private reschedule(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.running.length === 0) return;
    let least = Number.POSITIVE_INFINITY;
    for (const j of this.running) least = Math.min(least, j.remainingMs);
    this.timer = this.loop.at(this.loop.now + least / this.speed(), () => this.finish());
  }

  private finish(): void {
    this.timer = undefined;
    this.advance();
    const now = this.loop.now;
    const finished = this.running.filter((j) => j.remainingMs <= 1e-3);
    for (const j of finished) {
      this.running.splice(this.running.indexOf(j), 1);
      this.kvUsed -= j.tokens;
    }
    this.admit();
    this.reschedule();
    for (const j of finished) {
      j.done({
        loadMs: j.startedAt - j.arrivedAt,
        promptEvalMs: now - j.startedAt,
        evalMs: 0,
        totalMs: now - j.arrivedAt,
        promptTokens: j.tokens,
        cachedTokens: 0,
        evalTokens: 0,
        coldLoad: false,
      });
    }
  }
}
