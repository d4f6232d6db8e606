// What a simulated run keeps and reports: every call's record, loads and unloads as the GPUs
// saw them, each decision's measured cost, and the metrics computed from them at the end.
import type { RefusalReason } from "../core/index.js";
import { mean, percentileSorted, round } from "./stats.js";
import type {
  CallRecord,
  DecisionRecord,
  LoadRecord,
  PolicyName,
  PromptCacheMetrics,
  SimMetrics,
  SimResult,
  UnloadRecord,
} from "./types.js";

export class Recorder {
  readonly calls: CallRecord[] = [];
  readonly decisions: DecisionRecord[] = [];
  private readonly unloads: UnloadRecord[] = [];
  private readonly loadRecs: LoadRecord[] = [];
  private readonly decisionUs: number[] = [];
  /** Service time alone of every call in the traffic (ms). */
  readonly idealMs: number[] = [];
  private loadsN = 0;
  private loadedMiB = 0;
  private evictPlanned = 0;
  private evictOllama = 0;
  private expiries = 0;
  private readonly standAsides: Record<RefusalReason, number> = {
    "gpu-busy": 0,
    "model-too-large": 0,
    "prompt-too-large": 0,
    "provider-unavailable": 0,
    "model-unknown": 0,
  };
  private lastDoneMs = 0;

  constructor(
    /** Keep per-call, per-decision and per-unload records in the result. */
    readonly detailed: boolean,
    /** Measure each decision's wall-clock cost. */
    private readonly measure: boolean,
    /** The wait limit (ms): a completed call slower than this is reported late. */
    private readonly waitLimitMs: number,
  ) {}

  /** Runs one decision, measuring its wall-clock cost when measuring. */
  timed<T>(decide: () => T): T {
    if (!this.measure) return decide();
    const t0 = process.hrtime.bigint();
    const out = decide();
    this.decisionUs.push(Number(process.hrtime.bigint() - t0) / 1000);
    return out;
  }

  /** A decision the scheduler measured itself (ms of indexing and planning). */
  decided(ms: number): void {
    if (this.measure) this.decisionUs.push(ms * 1000);
  }

  standAside(reason: RefusalReason): void {
    this.standAsides[reason]++;
  }

  done(atMs: number): void {
    this.lastDoneMs = Math.max(this.lastDoneMs, atMs);
  }

  loadStarted(atMs: number, provider: string, model: string, footprintMiB: number): void {
    this.loadsN++;
    this.loadedMiB += footprintMiB;
    if (this.detailed) this.loadRecs.push({ atMs, provider, model, footprintMiB });
  }

  unloaded(r: UnloadRecord): void {
    if (r.cause === "planned") this.evictPlanned++;
    else if (r.cause === "evicted") this.evictOllama++;
    else this.expiries++;
    if (this.detailed) this.unloads.push(r);
  }

  result(
    scenario: string,
    policy: PolicyName,
    seed: number,
    gpus: readonly { busyMs(): number }[],
    events: number,
  ): SimResult {
    const done = this.calls.filter((c) => c.outcome === "done");
    // A call that arrived but never finished (still queued when the horizon stopped the run).
    const unfinished = this.calls.filter(
      (c) => c.outcome === "dropped" && Number.isFinite(c.arrivalMs),
    ).length;
    const lat = done.map((c) => c.latencyMs / 1000).sort((a, b) => a - b);
    const arrived = this.calls.filter((c) => Number.isFinite(c.arrivalMs));
    const all = arrived
      .map((c) => (c.outcome === "done" ? c.latencyMs / 1000 : Number.POSITIVE_INFINITY))
      .sort((a, b) => a - b);
    const p95All = percentileSorted(all, 95);
    const ideal = this.idealMs.map((x) => x / 1000).sort((a, b) => a - b);
    const us = [...this.decisionUs].sort((a, b) => a - b);
    // Busy time is counted up to the last completion (idle keep_alive tails do not dilute it).
    const end = this.lastDoneMs;
    let busy = 0;
    for (const g of gpus) busy += g.busyMs();
    const metrics: SimMetrics = {
      scenario,
      policy,
      seed,
      latency_mean_s: round(mean(lat)),
      latency_p95_s: round(percentileSorted(lat, 95)),
      latency_p99_s: round(percentileSorted(lat, 99)),
      latency_p95_arrivals_s: Number.isFinite(p95All) ? round(p95All) : null,
      late_calls: done.filter((c) => c.latencyMs > this.waitLimitMs).length,
      gib_loaded: round(this.loadedMiB / 1024),
      loads: this.loadsN,
      evictions: this.evictPlanned + this.evictOllama,
      stand_asides: { ...this.standAsides },
      gpu_busy_fraction: round(end > 0 ? busy / (end * gpus.length) : 0, 4),
      decision_us_p50: round(percentileSorted(us, 50), 2),
      decision_us_p99: round(percentileSorted(us, 99), 2),
      ideal_p95_s: round(percentileSorted(ideal, 95)),
      calls: this.idealMs.length,
      completed: done.length,
      dropped: this.calls.filter((c) => c.outcome === "dropped").length - unfinished,
      unfinished,
      cold_calls: done.filter((c) => c.coldLoad).length,
      evictions_planned: this.evictPlanned,
      evictions_by_ollama: this.evictOllama,
      expiries: this.expiries,
      decisions: this.decisionUs.length,
      virtual_s: round(this.lastDoneMs / 1000, 1),
    };
    const cache = promptCacheMetrics(done);
    if (cache !== undefined) metrics.prompt_cache = cache;
    const out: SimResult = { metrics, latencies: lat, ideal, events };
    if (this.detailed) {
      out.calls = this.calls;
      out.decisions = this.decisions;
      out.unloads = this.unloads;
      out.loads = this.loadRecs;
    }
    return out;
  }
}

/** Time to first token and prompt-cache reuse over the completed calls that had a prompt. */
export function promptCacheMetrics(done: readonly CallRecord[]): PromptCacheMetrics | undefined {
  const turns = done.flatMap((c) => (c.prompt !== undefined ? [c.prompt] : []));
  if (turns.length === 0) return undefined;
  const ttft = turns.map((p) => p.ttftMs / 1000).sort((a, b) => a - b);
  const cached = turns.reduce((n, p) => n + p.cachedTokens, 0);
  const available = turns.reduce((n, p) => n + p.availableTokens, 0);
  return {
    ttft_p50_s: round(percentileSorted(ttft, 50)),
    ttft_p95_s: round(percentileSorted(ttft, 95)),
    prefill_s: round(turns.reduce((n, p) => n + p.prefillMs, 0) / 1000, 1),
    cached_tokens: cached,
    available_tokens: available,
    captured_share: round(available > 0 ? cached / available : 1, 4),
  };
}
