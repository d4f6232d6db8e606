// The scheduler's own types: what Place, Wait, Release, Commit and Attribute take and give,
// independent of any transport (the gRPC/Connect service and the proxy map onto these).
import type {
  Band,
  CallOutcome,
  Candidate,
  RefusalReason as CoreRefusalReason,
  Decision,
  Phase,
  PlacementSnapshot,
  PlannerOptions,
  PlanRequest,
  Refusal,
  SnapshotIndex,
} from "../core/index.js";
import type { SchedulerConfig } from "./config.js";
import type { ConversationRef } from "./conversations.js";
import type { SchedulerStore } from "./store.js";
import type { SchedulerTimers } from "./timers.js";

export type { CallOutcome, Phase };

/**
 * Why Place refused: the planner's reasons, and `unschedulable` — the call took its thread's
 * published binding, which says no model fits the phase (docs/rules/binding.md §9).
 */
export type RefusalReason = CoreRefusalReason | "unschedulable";

export interface PlaceInput {
  /** "namespace/name"; validated by the caller. */
  agent: string;
  threadId: string;
  phase: Phase;
  /** Preferred first; empty = the configured list for the phase. */
  candidates: Candidate[];
  tolerance?: number;
  promptTokens: number;
  promptChars: number;
  maxOutputTokens: number;
  cannotWait: boolean;
  /** The call's conversation (docs/rules/placement.md §5.5): its last turn's copy may hold its prefix. */
  conversation?: ConversationRef | undefined;
  /** The call's priority band (docs/rules/fairness.md §2); undefined = the sidecar's. */
  priority?: Band | undefined;
  /**
   * The revision of the thread's binding whose candidates `candidates` came from, when the
   * caller resolved them itself (the proxy; docs/rules/binding.md §9); 0 or absent: none.
   */
  bindingRevision?: number;
}

export interface PlacementOut {
  ticketId: string;
  provider: string;
  endpoint: string;
  model: string;
  coldLoad: boolean;
  evicted: string[];
  footprintMiB: number;
  contextLength: number;
  /** Lease end (epoch ms); 0 for a static fallback. */
  expiresAtMs: number;
  fromPlan: boolean;
  staticFallback: boolean;
  /** The engine serving the endpoint; "" for a static fallback (unknown). */
  engine: string;
  /** Prompt tokens the copy is expected to hold for this call (docs/rules/placement.md §5.5). */
  expectedCachedTokens: number;
  /** The band the call was admitted in (docs/rules/fairness.md §2); absent for a static fallback. */
  priority?: Band;
  /** Waiting calls ranked ahead of it when it began to wait (§3); 0 when it never waited behind any. */
  queuePosition?: number;
  /** The thread's binding revision its candidates came from (binding.md §9); 0 when none. */
  bindingRevision?: number;
}

export interface RefusalOut extends Omit<Refusal, "reason"> {
  reason: RefusalReason;
  promptTokens: number;
  /** The thread's binding revision the call was decided on (binding.md §9); 0 or absent: none. */
  bindingRevision?: number;
  /** Waiting calls ranked ahead of this one for its model (docs/rules/fairness.md §3), when fair share ranked it. */
  queuePosition?: number;
  /** Set when the fair-share gate held a claim back for better-ranked waiters (§3). */
  fairDeferral?: FairDeferral;
}

/** What the fair-share gate held a call back for (docs/rules/fairness.md §3). */
export interface FairDeferral {
  /** Waiters ranked before the call. */
  ahead: number;
  /** Slots the model had free, owed to them. */
  freeSlots: number;
}

export type PlaceOutcome =
  | { kind: "placed"; placement: PlacementOut }
  | { kind: "refused"; refusal: RefusalOut };

export type WaitEventOut =
  | { kind: "waiting"; refusal: RefusalOut; deadlineMs: number }
  | { kind: "placed"; placement: PlacementOut }
  | { kind: "stand-aside"; refusal: RefusalOut };

export interface ReleaseInput {
  ticketId: string;
  /** How the call ended; "unspecified" is neutral (never a failure). */
  outcome: CallOutcome;
  latencyMs: number;
  promptTokens: number;
  promptChars: number;
  outputTokens: number;
  error: string;
  /** Prompt tokens the engine reused from its prompt cache (at most promptTokens); 0 = none or unknown. */
  cachedPromptTokens?: number;
  /** The engine's time on the prompt's uncached tokens (ms); 0 = unknown. Teaches the prefill rate. */
  promptEvalMs?: number;
  /**
   * False when the call never reached the provider (refused before forwarding, the client
   * left first, the request was the caller's fault): the ticket is released and nothing is
   * learned — no failure for the circuit breaker, no residency, no use. Default true.
   */
  ran?: boolean;
  /** The context (num_ctx) the call was forwarded with, when the sender set one. */
  contextSent?: number;
  /** The engine's load time within the call (ms); 0 = warm or unknown. */
  loadMs?: number;
  /**
   * The provider could not be reached (connection refused or reset): this sidecar stops
   * choosing it at once and marks it suspect for the others, until a newer probe.
   */
  providerUnreachable?: boolean;
}

export interface AttributionOut {
  ticketId: string;
  provider: string;
  endpoint: string;
  model: string;
  agent: string;
  evicted: string[];
  coldLoad: boolean;
  queueWaitMs: number;
  placedAtMs: number;
  releasedAtMs: number;
  latencyMs: number;
  estimatedPromptTokens: number;
  promptTokens: number;
  /** Prompt tokens the engine reused from its prompt cache, as reported at Release. */
  cachedPromptTokens: number;
  /** Prompt tokens the copy was expected to hold when the call was placed. */
  expectedCachedPromptTokens: number;
  /** Prefill the reused tokens saved (ms), at the measured prefill rate. */
  prefillSavedMs: number;
  truncated: boolean;
  /** outcome === "succeeded", for readers of the older field. */
  success: boolean;
  outcome: CallOutcome;
  error: string;
  fromPlan: boolean;
  engine: string;
  /** The band the call was admitted in; "" for a static fallback. */
  priority: Band | "";
  /** Waiting calls ranked ahead of it when it began to wait; 0 when none. */
  queuePosition: number;
  /** The thread's binding revision the call was placed by (binding.md §9); 0 when none. */
  bindingRevision: number;
}

export interface CommitInput {
  agent: string;
  threadId: string;
  phase: Phase;
  candidates: Candidate[];
  tolerance?: number;
  crew: string;
  promptChars: number;
}

/** What the scheduler needs from inference servers (an OllamaClient per endpoint will do). */
export interface ProviderOps {
  /** Unloads `model` at the provider (POST /api/generate {model, keep_alive: 0}). */
  unload(endpoint: string, model: string): Promise<void>;
  /** Starts loading `model` (POST /api/generate {model}); resolves when loaded. */
  load(endpoint: string, model: string): Promise<void>;
}

/** One decision as onDecision sees it. */
export interface DecisionEvent {
  /** The call it was made for (the object the caller passed to place, wait or acquire). */
  input: PlaceInput;
  /** What the decision read, as the core took it. */
  snapshot: PlacementSnapshot;
  index: SnapshotIndex;
  /** The question as the planner was asked it (explainPlan takes the same). */
  request: PlanRequest;
  decision: Decision;
  decideMs: number;
}

/** Observability hooks (metrics, logs); every one optional. */
export interface SchedulerHooks {
  /** One placement attempt's outcome; a waiting call makes one per attempt (`queueWaitMs` so far). */
  onPlace?(
    outcome: PlaceOutcome,
    decision: Decision | undefined,
    elapsedMs: number,
    input: PlaceInput,
    queueWaitMs: number,
  ): void;
  /**
   * Every decision, with the index it was made on: `decideMs` is indexing and planning alone
   * (no reads, no waiting). For observers that explain decisions (the simulation's records).
   */
  onDecision?(d: DecisionEvent): void;
  onRelease?(attribution: AttributionOut): void;
  onClaimLost?(provider: string, reason: string): void;
  onEvict?(provider: string, model: string, ok: boolean, error?: unknown): void;
  /** A released ticket's delete failed: retried later, or given up (its lease ends it). */
  onReleaseDeleteFailed?(provider: string, willRetry: boolean, error: unknown): void;
  log?(level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>): void;
}

export interface SchedulerOptions {
  /** The shared state: the sidecar's StateStore, or the simulation's adapter. */
  state: SchedulerStore;
  config: SchedulerConfig;
  ops: ProviderOps;
  /** Epoch ms; default Date.now. */
  now?: () => number;
  /** Timers on the same clock as `now`; default Node's. */
  timers?: SchedulerTimers;
  hooks?: SchedulerHooks;
  /**
   * Planner knobs beyond what the configuration sets (policy, cost weights): the simulation's
   * experiments. Absent = the configuration's.
   */
  plannerOverrides?: Partial<PlannerOptions>;
  /** How many attributions are kept for Attribute; default 2,048 (released ones go first). */
  attributionCapacity?: number;
  /**
   * This process's token in fair-share keys ([A-Za-z0-9_-]); default random. The simulation
   * passes its own, so that equal ranks break the same way in every run.
   */
  instanceId?: string;
  /** Per-discussion bindings (docs/rules/binding.md §9); absent: every thread uses the static candidates. */
  discussions?: DiscussionLink;
}

/** What the scheduler asks of per-discussion bindings (docs/rules/binding.md §9). */
export interface DiscussionLink {
  /** The agent's thread's published binding for the phase, when there is one. */
  binding(agent: string, threadId: string, phase: Phase): ThreadBinding | undefined;
  /** The agent's thread is live (a Commit): the binder binds it. */
  opened(agent: string, threadId: string): void;
  /** The thread ended (EndThread): its bindings go. */
  closed(agent: string, threadId: string): void;
}

/** A thread's published binding for one phase, as a call uses it (docs/rules/binding.md §9). */
export type ThreadBinding =
  | { kind: "binding"; revision: number; candidates: Candidate[] }
  /** No model fits the phase: `reason` is the binder's (binding.md §6). */
  | { kind: "unschedulable"; revision: number; reason: string };
