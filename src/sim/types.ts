// The simulation's types: its options, the records it keeps and the metrics it reports, and the
// state of a call and of an agent's turn as the world and the policies share them.
import type { Candidate, Decision, PlannerOptions, RefusalReason } from "../core/index.js";
import type { PromptChain, PromptPart } from "../emulator/index.js";
import type { PromptMarks } from "../scheduler/index.js";
import type { UnloadCause } from "./ollama.js";
import type { Scenario, ScenarioAgent } from "./scenarios.js";
import type { Discussion, Turn } from "./workload.js";

/**
 * "ours" is the sidecar's default policy (expected seconds), "kubemoot" the sidecar run with
 * KUBEMOOT_POLICY=kubemoot (the weighted cost), "ours-no-affinity" ours told nothing of the
 * calls' conversations (docs/rules/placement.md §5.5; only `bench affinity` runs it); the rest
 * are baselines.
 */
export type PolicyName =
  | "ours"
  | "kubemoot"
  | "ours-no-affinity"
  | "static"
  | "round-robin"
  | "least-busy"
  | "random";
export const POLICIES: readonly PolicyName[] = [
  "ours",
  "kubemoot",
  "static",
  "round-robin",
  "least-busy",
  "random",
];

/** The policies that run the sidecar's planner. */
export function runsPlanner(p: PolicyName): p is "ours" | "kubemoot" | "ours-no-affinity" {
  return p === "ours" || p === "kubemoot" || p === "ours-no-affinity";
}

export interface SimOptions {
  scenario: Scenario;
  policy: PolicyName;
  seed: number;
  /** Planner knobs for experiments (cost weights, default call time, ...), beyond the sidecar's config. */
  planner?: Partial<PlannerOptions>;
  /** Publisher probe interval (ms); 0 publishes every change at once. Default 10 000. */
  probeIntervalMs?: number;
  /** Lifetime of a residency overlay after its last write (ms); default 10 min (bucket TTL). */
  overlayTtlMs?: number;
  /**
   * Experiment: drop an overlay once a probe newer than its write no longer lists the model
   * (the overlay then only bridges the gap until the publisher has seen the load).
   */
  overlaySupersededByProbe?: boolean;
  /** OLLAMA_MAX_LOADED_MODELS of every GPU (0 = unlimited); default 3, Ollama's per-GPU default. */
  maxLoadedModels?: number;
  /**
   * Publish each GPU's OLLAMA_MAX_LOADED_MODELS as `maxLoadedModels` in its provider state, as
   * the operator does when it knows it (default true; false measures a fleet where it is unknown).
   */
  publishMaxLoadedModels?: boolean;
  /** The wait's safety limit (s); default 90. */
  waitLimitS?: number;
  /** Keep per-call, per-decision and per-unload records (for assertions). */
  record?: boolean;
  /** Measure each decision's wall-clock cost (process.hrtime); default true. */
  measure?: boolean;
}

export type CallOutcome = "done" | "stand-aside" | "dropped" | "failed";

export interface CallRecord {
  id: string;
  discussion: string;
  agent: string;
  preferred: string;
  /** Model and provider the call ran on ("" when it never ran). */
  model: string;
  provider: string;
  arrivalMs: number;
  doneMs: number;
  /** Arrival → completion (ms), waits and loads included; NaN unless done. */
  latencyMs: number;
  /** Service time of the preferred model alone (ms). */
  idealMs: number;
  coldLoad: boolean;
  outcome: CallOutcome;
  standAside?: RefusalReason;
  /** An agent loop's turn, once done: its prompt, what the engine reused, what any placement could have. */
  prompt?: PromptRecord;
}

export interface PromptRecord {
  tokens: number;
  /** Prompt tokens the engine reused from its prompt cache. */
  cachedTokens: number;
  /**
   * Prompt tokens an oracle placement could have reused: the longest prefix of this prompt that
   * some earlier call of the model evaluated or generated anywhere (an unbounded cache).
   */
  availableTokens: number;
  /** The engine's time on the uncached tokens (ms). */
  prefillMs: number;
  /** Arrival → first token (ms). */
  ttftMs: number;
}

export interface CopyInfo {
  provider: string;
  model: string;
  tickets: number;
  slots: number;
}

export interface DecisionRecord {
  atMs: number;
  callId: string;
  agent: string;
  preferred: string;
  acceptable: string[];
  kind: Decision["kind"];
  step?: number;
  provider?: string;
  model?: string;
  cold?: boolean;
  loading?: boolean;
  evicts: Record<string, number>;
  /** Live tickets on each planned victim at the decision. */
  victimTickets: Record<string, number>;
  /** Eligible warm copies of acceptable models with a free slot, at the decision. */
  warmFreeSlot: CopyInfo[];
  /** Eligible warm copies of the model claimed (or the preferred), with their queues. */
  copies: CopyInfo[];
  /** The chosen provider's budget at the decision (MiB). */
  target?: { usable: number; free: number; committed: number; footprint: number; active: number };
  /** Whether the state layer's atomic budget check accepts the claim. */
  claimFits?: boolean;
}

export interface UnloadRecord {
  atMs: number;
  provider: string;
  model: string;
  cause: UnloadCause;
  footprintMiB: number;
  /** Our live tickets on the model there when it started unloading. */
  liveTickets: number;
}

export interface LoadRecord {
  atMs: number;
  provider: string;
  model: string;
  footprintMiB: number;
}

export interface SimMetrics {
  scenario: string;
  policy: PolicyName;
  seed: number;
  latency_mean_s: number;
  latency_p95_s: number;
  latency_p99_s: number;
  /**
   * p95 over every call that arrived, a call that stood aside or never finished counting as
   * never answered: null when more than 5 % of them were not answered. The p95 fields above
   * count completed calls only, so a policy cannot look faster by dropping its slowest calls.
   */
  latency_p95_arrivals_s: number | null;
  /** Completed calls that took longer than the wait limit (a coordinator waits no longer). */
  late_calls: number;
  gib_loaded: number;
  loads: number;
  evictions: number;
  stand_asides: Record<RefusalReason, number>;
  gpu_busy_fraction: number;
  decision_us_p50: number;
  decision_us_p99: number;
  ideal_p95_s: number;
  /** Calls in the traffic, completed, and never run (an earlier call of the turn stood aside). */
  calls: number;
  completed: number;
  dropped: number;
  /** Calls still unfinished at the safety horizon (0 unless a policy never drains). */
  unfinished: number;
  cold_calls: number;
  evictions_planned: number;
  evictions_by_ollama: number;
  expiries: number;
  decisions: number;
  virtual_s: number;
  /** Agent-loop scenarios only: time to first token and prompt-cache reuse over completed calls. */
  prompt_cache?: PromptCacheMetrics;
}

export interface PromptCacheMetrics {
  ttft_p50_s: number;
  ttft_p95_s: number;
  /** Seconds engines spent evaluating prompts, summed over calls. */
  prefill_s: number;
  cached_tokens: number;
  available_tokens: number;
  /** cached_tokens / available_tokens (1 when nothing was available). */
  captured_share: number;
}

export interface SimResult {
  metrics: SimMetrics;
  /** Latencies of the completed calls (s), ascending. */
  latencies: number[];
  /** Service time alone of every call in the traffic (s), ascending. */
  ideal: number[];
  calls?: CallRecord[];
  decisions?: DecisionRecord[];
  unloads?: UnloadRecord[];
  loads?: LoadRecord[];
  /** Events the loop ran (for the curious; deterministic). */
  events: number;
}

/** Fields of SimMetrics that are wall-clock measurements (excluded from determinism checks). */
export const WALL_CLOCK_FIELDS: readonly (keyof SimMetrics)[] = ["decision_us_p50", "decision_us_p99"];

/** Virtual time 0 as epoch ms (the snapshot's clocks are epoch based). */
export const EPOCH_MS = Date.UTC(2026, 0, 1);

export interface CallState {
  id: string;
  turn: TurnState;
  index: number;
  arrivalMs: number;
  record: CallRecord;
  /** An agent loop's turn: its prompt as the engine's cache and the sidecar see it. */
  prompt?: SimPrompt;
}

export interface SimPrompt {
  conversation: string;
  chain: PromptChain;
  answer: PromptPart;
  /** The prompt's fingerprint as the proxy takes it (message boundaries, characters, answers). */
  marks: PromptMarks;
  tokens: number;
  chars: number;
  outputTokens: number;
  /** What an oracle placement could reuse of it (PromptRecord.availableTokens), fixed at arrival. */
  availableTokens: number;
}

export interface TurnState {
  discussion: Discussion;
  turn: Turn;
  agent: ScenarioAgent;
  acceptable: Candidate[];
  next: number;
  ended: boolean;
}
