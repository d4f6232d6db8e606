// The sidecar's scheduler: Place, Wait, Release, Renew, Commit, EndThread and Attribute over
// the pure core (src/core) and the shared state (src/state). Transport-agnostic: the gRPC and
// Connect service (service.ts), the local proxy and the demo all call this one class, so every
// path runs the very same decisions.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  aggregateDemand,
  type Candidate,
  type CharsPerToken,
  CLOSED_CIRCUIT,
  type ClaimDecision,
  DEFAULT_COST_WEIGHTS,
  type Decision,
  estimateTokens,
  heldPlanUsable,
  INITIAL_CHARS_PER_TOKEN,
  indexSnapshot,
  learnCharsPerToken,
  NO_SUCCESS_SAMPLES,
  type PlannerOptions,
  type ProviderHealth,
  plan,
  recordFailure,
  recordLatency,
  recordOutcome,
  recordSuccess,
  refusalOf,
  type SnapshotIndex,
  selectionPromptTokens,
} from "../../src/core/index.js";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { StateStore } from "../../src/state/index.js";
import type { SchedulerConfig, StaticBinding } from "./config.js";

export type Phase = "mulling" | "triage";
export type RefusalReason = "gpu-busy" | "model-too-large" | "prompt-too-large";

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
}

export interface RefusalOut {
  reason: RefusalReason;
  model: string;
  message: string;
  largestContext: number;
  promptTokens: number;
  /** gpu-busy from a queue decision: the planner's estimate (s) until a slot frees. */
  estimatedWaitS?: number;
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
  success: boolean;
  latencyMs: number;
  promptTokens: number;
  promptChars: number;
  outputTokens: number;
  error: string;
  /**
   * False when the call never reached the provider (refused before forwarding, the client
   * left first, the request was the caller's fault): the ticket is released and nothing is
   * learned — no failure for the circuit breaker, no residency, no use. Default true.
   */
  ran?: boolean;
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
  truncated: boolean;
  success: boolean;
  error: string;
  fromPlan: boolean;
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

/** Observability hooks (metrics, logs); every one optional. */
export interface SchedulerHooks {
  onPlace?(outcome: PlaceOutcome, decision: Decision | undefined, elapsedMs: number): void;
  onRelease?(attribution: AttributionOut): void;
  onClaimLost?(provider: string, reason: string): void;
  onEvict?(provider: string, model: string, ok: boolean, error?: unknown): void;
  /** A released ticket's delete failed: retried later, or given up (its lease ends it). */
  onReleaseDeleteFailed?(provider: string, willRetry: boolean, error: unknown): void;
  log?(level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>): void;
}

export interface SchedulerOptions {
  state: StateStore;
  config: SchedulerConfig;
  ops: ProviderOps;
  /** Epoch ms; default Date.now. */
  now?: () => number;
  hooks?: SchedulerHooks;
  /** How many attributions are kept for Attribute; default 2,048 (released ones go first). */
  attributionCapacity?: number;
}

interface Held {
  placement: PlacementOut;
  timer: NodeJS.Timeout;
}

/** What this sidecar remembers of a ticket it placed (for Release, Renew and Attribute). */
interface Record_ extends AttributionOut {
  released: boolean;
  staticFallback: boolean;
  footprintMiB: number;
  expiresAtMs: number;
}

/**
 * Calls remembered for Attribute (the oldest released ones are forgotten first): an agent asks
 * about a call it has just made, and 2,048 covers over half an hour of a busy agent calling
 * every second. Each record is some twenty fields, held until it is pushed out, so the bound
 * is what keeps their memory from growing with the number of calls.
 */
const DEFAULT_ATTRIBUTION_CAPACITY = 2048;

/**
 * How long a use of a model waits for more uses before it is written (ms): the decayed rate
 * has a 10-minute half-life, so this delay is invisible to planners, and a busy model costs
 * one demand write per interval instead of one per call.
 */
const USE_LINGER_MS = 100;

/** Backoff of a ticket delete that failed (ms): first retry, and the longest wait between two. */
const RELEASE_RETRY_FIRST_MS = 100;
const RELEASE_RETRY_MAX_MS = 2000;

/** The heuristic threshold below which a reported prompt counts as cut by the engine. */
const TRUNCATION_RATIO = 0.5;

export class Scheduler {
  private readonly state: StateStore;
  private readonly cfg: SchedulerConfig;
  private readonly ops: ProviderOps;
  private readonly now: () => number;
  private readonly hooks: SchedulerHooks;
  private readonly capacity: number;
  private readonly health = new Map<string, ProviderHealth>();
  private charsPerToken: CharsPerToken = INITIAL_CHARS_PER_TOKEN;
  private readonly records = new Map<string, Record_>();
  private readonly held = new Map<string, Held>();
  /** Residency overlays this sidecar wrote (provider, model → MiB), to skip rewriting them. */
  private readonly overlays = new Map<string, number>();
  /** Writes started off the caller's path; close() waits for them. */
  private readonly background = new Set<Promise<void>>();
  private closed = false;

  private readonly plannerOptions: Partial<PlannerOptions>;

  constructor(o: SchedulerOptions) {
    this.state = o.state;
    this.cfg = o.config;
    this.ops = o.ops;
    this.now = o.now ?? Date.now;
    this.hooks = o.hooks ?? {};
    this.capacity = o.attributionCapacity ?? DEFAULT_ATTRIBUTION_CAPACITY;
    this.plannerOptions = o.config.costWeights
      ? { weights: { ...DEFAULT_COST_WEIGHTS, ...o.config.costWeights } }
      : {};
  }

  get config(): SchedulerConfig {
    return this.cfg;
  }

  /** Tickets this sidecar holds right now (claimed, not released), held plans included. */
  get activeTickets(): number {
    let n = 0;
    for (const r of this.records.values()) if (!r.released) n++;
    return n;
  }

  /** Prompt tokens for a call: the caller's count, else chars over the learned ratio. */
  estimatePromptTokens(promptTokens: number, promptChars: number): number {
    return promptTokens > 0 ? promptTokens : estimateTokens(promptChars, this.charsPerToken);
  }

  /** The candidates a call chooses among: the request's, else the configured list. */
  candidatesFor(phase: Phase, given: Candidate[]): Candidate[] {
    if (given.length > 0) return given;
    return phase === "triage" ? this.cfg.candidatesTriage : this.cfg.candidatesMulling;
  }

  /** One placement attempt; never blocks on capacity. */
  async place(input: PlaceInput, queueWaitMs = 0): Promise<PlaceOutcome> {
    this.assertOpen();
    const started = performance.now();
    const candidates = this.candidatesFor(input.phase, input.candidates);
    if (candidates.length === 0) {
      throw new KubemootError(
        ErrorCode.InvalidArgument,
        `candidates: empty, and no KUBEMOOT_MODEL_CANDIDATES_${input.phase === "triage" ? "TRIAGE" : "MULLING"} is configured`,
        { field: "candidates" },
      );
    }
    const tokens = this.estimatePromptTokens(input.promptTokens, input.promptChars);
    const tolerance = input.tolerance ?? this.cfg.tolerance;

    let decision: Decision | undefined;
    let outcome: PlaceOutcome | undefined;
    const heldKey = input.threadId ? threadKey(input.agent, input.threadId) : "";
    for (let attempt = 0; attempt <= this.cfg.claimReplans && !outcome; attempt++) {
      const ix = await this.snapshot();
      if (attempt === 0 && heldKey) {
        const taken = await this.takeHeldPlan(heldKey, ix, tokens);
        if (taken) {
          outcome = { kind: "placed", placement: taken };
          break;
        }
      }
      decision = plan(ix, { candidates, tolerance, promptTokens: tokens, phase: input.phase });
      if (decision.kind !== "claim") break;
      const placed = await this.claim(decision, input, tokens, queueWaitMs, false);
      if (placed) outcome = { kind: "placed", placement: placed };
    }
    if (!outcome) outcome = this.refusalOutcome(decision, candidates, tokens, input);
    this.hooks.onPlace?.(outcome, decision, performance.now() - started);
    return outcome;
  }

  /**
   * Waits for capacity, driven by state changes: yields `waiting` once before it first
   * blocks, then `placed` or `stand-aside`. Ends quietly when `signal` aborts.
   */
  async *wait(input: PlaceInput, signal: AbortSignal, limitS = 0): AsyncGenerator<WaitEventOut> {
    const started = this.now();
    const limit = limitS > 0 ? Math.min(limitS, this.cfg.waitLimitS) : this.cfg.waitLimitS;
    const deadlineMs = started + limit * 1000;
    let waitingFor = "";
    try {
      for (;;) {
        if (signal.aborted) return;
        const counter = this.state.capacity.counter;
        const out = await this.place(input, waitingFor ? this.now() - started : 0);
        if (out.kind === "placed") {
          yield { kind: "placed", placement: out.placement };
          return;
        }
        const refusal = out.refusal;
        if (refusal.reason !== "gpu-busy" || input.phase === "triage") {
          yield { kind: "stand-aside", refusal };
          return;
        }
        if (!this.state.capacity.available) {
          yield {
            kind: "stand-aside",
            refusal: { ...refusal, message: `${refusal.message} (no state watch: not waiting blind)` },
          };
          return;
        }
        if (this.now() >= deadlineMs) {
          yield { kind: "stand-aside", refusal: waitLimitRefusal(refusal, limit) };
          return;
        }
        if (!waitingFor) {
          waitingFor = refusal.model;
          yield { kind: "waiting", refusal, deadlineMs };
          await this.state.demand
            .putWait(waitingFor, input.agent)
            .catch((err) => this.warn("wait demand", err));
        }
        const r = await this.state.capacity.awaitChange(counter, deadlineMs, signal);
        if (r.kind === "aborted") return;
        if (r.kind === "unavailable") {
          yield {
            kind: "stand-aside",
            refusal: { ...refusal, message: `${refusal.message} (the state watch was lost: ${r.reason})` },
          };
          return;
        }
        // "changed" or "deadline": try again; the deadline check above ends the loop.
      }
    } finally {
      if (waitingFor) {
        await this.state.demand
          .clearWait(waitingFor, input.agent)
          .catch((err) => this.warn("clear wait", err));
      }
    }
  }

  /** Ends a ticket and learns from the call's outcome. Idempotent. */
  async release(input: ReleaseInput): Promise<boolean> {
    const rec = this.records.get(input.ticketId);
    if (!rec || rec.released) {
      if (rec) return false;
      // Not ours (or from before a restart): release by id if some provider has it.
      return this.releaseForeign(input.ticketId);
    }
    rec.released = true;
    rec.releasedAtMs = this.now();
    rec.success = input.success;
    rec.error = input.error;
    rec.latencyMs = input.latencyMs;
    rec.promptTokens = input.promptTokens;
    rec.truncated =
      input.promptTokens > 0 &&
      rec.estimatedPromptTokens > 0 &&
      input.promptTokens < rec.estimatedPromptTokens * TRUNCATION_RATIO;
    if (!rec.staticFallback) this.deleteBehind(rec);
    if (input.ran !== false) this.learn(rec, input);
    this.trimRecords();
    if (!rec.staticFallback && input.success && input.ran !== false) this.afterSuccess(rec);
    this.hooks.onRelease?.(publicRecord(rec));
    return true;
  }

  /** Extends a ticket's lease; returns the new expiry (epoch ms). */
  async renew(ticketId: string, extendS: number): Promise<number> {
    const rec = this.records.get(ticketId);
    if (!rec || rec.released || rec.staticFallback) {
      throw new KubemootError(
        ErrorCode.NotFound,
        `ticket_id: no active ticket "${ticketId}" on this sidecar`,
        {
          field: "ticket_id",
        },
      );
    }
    const leaseMs = (extendS > 0 ? extendS : this.cfg.leaseS) * 1000;
    const t = await this.state.tickets.renew({ provider: rec.provider, ticketId }, leaseMs);
    rec.expiresAtMs = t.expiresAt ?? this.now() + leaseMs;
    return rec.expiresAtMs;
  }

  /** Planning at selection: publish intents and selection, hold a claimed plan, pre-load. */
  async commit(input: CommitInput): Promise<PlaceOutcome> {
    this.assertOpen();
    const candidates = this.candidatesFor(input.phase, input.candidates);
    const models = candidates.map((c) => c.model);
    await Promise.all([
      this.state.demand.putIntents(input.agent, input.threadId, models),
      input.crew || this.cfg.crew
        ? this.state.demand.recordSelection(input.crew || this.cfg.crew, input.agent, models)
        : Promise.resolve(),
    ]);
    const key = threadKey(input.agent, input.threadId);
    await this.dropHeld(key);
    const tokens =
      input.promptChars > 0
        ? estimateTokens(input.promptChars, this.charsPerToken)
        : selectionPromptTokens(this.charsPerToken);
    const tolerance = input.tolerance ?? this.cfg.tolerance;
    const ix = await this.snapshot();
    const decision = plan(ix, { candidates, tolerance, promptTokens: tokens, phase: input.phase });
    if (decision.kind !== "claim") {
      return this.refusalOutcome(decision, candidates, tokens, { ...input, cannotWait: false });
    }
    const base: PlaceInput = {
      agent: input.agent,
      threadId: input.threadId,
      phase: input.phase,
      candidates,
      promptTokens: tokens,
      promptChars: input.promptChars,
      maxOutputTokens: 0,
      cannotWait: false,
    };
    const placement = await this.claim(decision, base, tokens, 0, true);
    if (!placement) return this.refusalOutcome(undefined, candidates, tokens, base);
    const timer = setTimeout(() => {
      void this.dropHeld(key);
    }, this.cfg.heldPlanTtlMs);
    timer.unref();
    this.held.set(key, { placement, timer });
    if (placement.coldLoad) {
      // The pre-load overlaps the agent's prompt building; its failure only costs that overlap.
      this.ops.load(placement.endpoint, placement.model).catch((err) => this.warn("pre-load", err));
    }
    return { kind: "placed", placement };
  }

  /** Releases a thread's held plan and intents; returns how many tickets were released. */
  async endThread(agent: string, threadId: string): Promise<number> {
    const released = (await this.dropHeld(threadKey(agent, threadId))) ? 1 : 0;
    await this.state.demand.clearThread(threadId, agent).catch((err) => this.warn("clear intents", err));
    return released;
  }

  attribute(ticketId: string): AttributionOut | undefined {
    const rec = this.records.get(ticketId);
    return rec ? publicRecord(rec) : undefined;
  }

  /** Releases every held plan and active ticket of this sidecar (shutdown). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.state.demand.flush().catch((err) => this.warn("use demand", err));
    await Promise.allSettled([...this.background]);
    for (const key of [...this.held.keys()]) await this.dropHeld(key);
    const active = [...this.records.values()].filter((r) => !r.released && !r.staticFallback);
    await Promise.all(
      active.map(async (r) => {
        r.released = true;
        r.releasedAtMs = this.now();
        r.error = "sidecar shut down";
        await this.state.tickets
          .release({ provider: r.provider, ticketId: r.ticketId })
          .catch((err) => this.warn("release at shutdown", err));
      }),
    );
  }

  // --- internals -------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new KubemootError(ErrorCode.ShuttingDown, "the sidecar is shutting down");
  }

  private async snapshot(): Promise<SnapshotIndex> {
    const [providers, { tickets, residencies }, demand] = await Promise.all([
      this.state.providers.list(),
      this.state.tickets.everything(),
      this.state.demand.snapshot(),
    ]);
    const nowMs = this.now();
    return indexSnapshot(
      {
        providers,
        tickets,
        residencies,
        demand: aggregateDemand(demand.entries, nowMs),
        health: this.health,
        nowMs,
      },
      this.plannerOptions,
    );
  }

  /** Claims the decision's ticket; on success unloads planned victims. Undefined = lost. */
  private async claim(
    d: ClaimDecision,
    input: PlaceInput,
    tokens: number,
    queueWaitMs: number,
    forPlan: boolean,
  ): Promise<PlacementOut | undefined> {
    const leaseMs = forPlan ? this.cfg.heldPlanTtlMs + 30_000 : this.cfg.leaseS * 1000;
    const res = await this.state.tickets.claim({
      provider: d.provider,
      model: d.model,
      modelFootprintMiB: d.footprintMiB,
      evicts: d.evicts,
      leaseMs,
    });
    if (!res.ok) {
      this.hooks.onClaimLost?.(d.provider, res.reason);
      return undefined;
    }
    const evicted: string[] = [];
    for (const victim of Object.keys(d.evicts)) {
      try {
        await this.ops.unload(d.endpoint, victim);
        await this.state.tickets.clearResidency(d.provider, victim);
        this.overlays.delete(`${d.provider}\u0000${victim}`);
        evicted.push(victim);
        this.hooks.onEvict?.(d.provider, victim, true);
      } catch (err) {
        // The engine evicts by itself when the load needs the room; the claim already holds it.
        this.hooks.onEvict?.(d.provider, victim, false, err);
      }
    }
    const placement: PlacementOut = {
      ticketId: res.ticket.ticketId,
      provider: d.provider,
      endpoint: d.endpoint,
      model: d.model,
      coldLoad: res.coldLoad,
      evicted,
      footprintMiB: d.footprintMiB,
      contextLength: d.contextLength,
      expiresAtMs: res.ticket.expiresAt ?? this.now() + leaseMs,
      fromPlan: false,
      staticFallback: false,
    };
    this.remember(placement, input.agent, tokens, queueWaitMs);
    return placement;
  }

  private refusalOutcome(
    decision: Decision | undefined,
    candidates: Candidate[],
    tokens: number,
    input: { phase: Phase; cannotWait: boolean; agent: string },
  ): PlaceOutcome {
    const r = decision ? refusalOf(decision) : undefined;
    const refusal: RefusalOut = r
      ? { ...r, promptTokens: tokens }
      : {
          reason: "gpu-busy",
          model: candidates[0]?.model ?? "",
          message: "Every GPU that can serve this call is busy right now; ask again shortly.",
          largestContext: 0,
          promptTokens: tokens,
        };
    if (input.cannotWait && refusal.reason !== "prompt-too-large") {
      const fallback = input.phase === "triage" ? this.cfg.staticTriage : this.cfg.staticMulling;
      if (fallback) return { kind: "placed", placement: this.staticPlacement(fallback, input.agent, tokens) };
    }
    return { kind: "refused", refusal };
  }

  private staticPlacement(b: StaticBinding, agent: string, tokens: number): PlacementOut {
    const placement: PlacementOut = {
      ticketId: `static-${randomUUID()}`,
      provider: "",
      endpoint: b.endpoint,
      model: b.model,
      coldLoad: false,
      evicted: [],
      footprintMiB: 0,
      contextLength: 0,
      expiresAtMs: 0,
      fromPlan: false,
      staticFallback: true,
    };
    this.remember(placement, agent, tokens, 0);
    return placement;
  }

  private async takeHeldPlan(
    key: string,
    ix: SnapshotIndex,
    tokens: number,
  ): Promise<PlacementOut | undefined> {
    const h = this.held.get(key);
    if (!h) return undefined;
    const check = heldPlanUsable(ix, { provider: h.placement.provider, model: h.placement.model }, tokens);
    if (!check.usable) {
      await this.dropHeld(key);
      return undefined;
    }
    clearTimeout(h.timer);
    this.held.delete(key);
    const rec = this.records.get(h.placement.ticketId);
    if (rec) {
      rec.fromPlan = true;
      rec.estimatedPromptTokens = tokens;
    }
    // The plan's lease covered the hold; give the call a call-sized lease from now.
    const expiresAtMs = await this.renew(h.placement.ticketId, this.cfg.leaseS).catch(
      () => h.placement.expiresAtMs,
    );
    return {
      ...h.placement,
      fromPlan: true,
      contextLength: check.contextLength || h.placement.contextLength,
      expiresAtMs,
    };
  }

  private async dropHeld(key: string): Promise<boolean> {
    const h = this.held.get(key);
    if (!h) return false;
    clearTimeout(h.timer);
    this.held.delete(key);
    const rec = this.records.get(h.placement.ticketId);
    if (rec && !rec.released) {
      rec.released = true;
      rec.releasedAtMs = this.now();
      rec.error = "held plan released unused";
      await this.state.tickets
        .release({ provider: h.placement.provider, ticketId: h.placement.ticketId })
        .catch((err) => this.warn("release held plan", err));
    }
    return true;
  }

  private async releaseForeign(ticketId: string): Promise<boolean> {
    const all = await this.state.tickets.allTickets();
    for (const [provider, tickets] of all) {
      if (tickets.some((t) => t.ticketId === ticketId)) {
        await this.state.tickets.release({ provider, ticketId });
        return true;
      }
    }
    return false;
  }

  private remember(p: PlacementOut, agent: string, tokens: number, queueWaitMs: number): void {
    this.records.set(p.ticketId, {
      ticketId: p.ticketId,
      provider: p.provider,
      endpoint: p.endpoint,
      model: p.model,
      agent,
      evicted: p.evicted,
      coldLoad: p.coldLoad,
      queueWaitMs,
      placedAtMs: this.now(),
      releasedAtMs: 0,
      latencyMs: 0,
      estimatedPromptTokens: tokens,
      promptTokens: 0,
      truncated: false,
      success: false,
      error: "",
      fromPlan: p.fromPlan,
      released: false,
      staticFallback: p.staticFallback,
      footprintMiB: p.footprintMiB,
      expiresAtMs: p.expiresAtMs,
    });
  }

  private learn(rec: Record_, input: ReleaseInput): void {
    if (input.promptChars > 0 && input.promptTokens > 0) {
      this.charsPerToken = learnCharsPerToken(this.charsPerToken, input.promptChars, input.promptTokens);
    }
    if (rec.staticFallback || !rec.provider) return;
    const nowMs = this.now();
    const h = this.health.get(rec.provider) ?? {};
    const circuit = input.success
      ? recordSuccess(h.circuit ?? CLOSED_CIRCUIT)
      : recordFailure(h.circuit ?? CLOSED_CIRCUIT, nowMs);
    const successByModel = new Map(h.successByModel ?? []);
    successByModel.set(
      rec.model,
      recordOutcome(successByModel.get(rec.model) ?? NO_SUCCESS_SAMPLES, input.success),
    );
    const latencyEmaMs =
      input.success && input.latencyMs > 0 ? recordLatency(h.latencyEmaMs, input.latencyMs) : h.latencyEmaMs;
    this.health.set(rec.provider, {
      circuit,
      successByModel,
      ...(latencyEmaMs !== undefined ? { latencyEmaMs } : {}),
    });
  }

  /**
   * What a successful call teaches the shared state: the model is resident there (the
   * overlay bridges the gap until the next probe) and it was used (demand). Written off the
   * caller's path: the overlay after a cold load or when its footprint changes, the use
   * coalesced per model.
   */
  private afterSuccess(rec: Record_): void {
    const overlayKey = `${rec.provider}\u0000${rec.model}`;
    const pending: Promise<unknown>[] = [];
    // After a cold load the overlay is (re)written: it bridges the gap until a probe lists the
    // model, and its writtenAt lets core drop it once a later probe does not (an unload).
    // After a warm call the model was already counted resident: nothing to write.
    if (rec.coldLoad || this.overlays.get(overlayKey) !== rec.footprintMiB) {
      this.overlays.set(overlayKey, rec.footprintMiB);
      pending.push(
        this.state.tickets
          .writeResidency({
            provider: rec.provider,
            modelName: rec.model,
            modelFootprintMiB: rec.footprintMiB,
            writtenAt: this.now(),
          })
          .catch((err) => {
            this.overlays.delete(overlayKey);
            this.warn("residency", err);
          }),
      );
    }
    // Uses of one model within USE_LINGER_MS go in one write: not one write per call.
    pending.push(
      this.state.demand
        .recordUse(rec.model, rec.agent, USE_LINGER_MS)
        .catch((err) => this.warn("use demand", err)),
    );
    const all = Promise.all(pending).then(() => undefined);
    this.background.add(all);
    void all.finally(() => this.background.delete(all));
  }

  /**
   * Sends the ticket's delete without making the caller wait for its acknowledgement: the
   * outcome is recorded already, and until the delete lands the ticket only counts a little
   * longer (never shorter), which the claim protocol allows. This process's next claim that
   * needs room waits for it (TicketBook), and close() waits for it. A failed delete is retried
   * with backoff until the lease would end the ticket anyway, or the sidecar closes.
   */
  private deleteBehind(rec: Record_): void {
    const ref = { provider: rec.provider, ticketId: rec.ticketId };
    const run = async (): Promise<void> => {
      for (let attempt = 0; ; attempt++) {
        try {
          await this.state.tickets.release(ref);
          return;
        } catch (err) {
          const delayMs = Math.min(RELEASE_RETRY_MAX_MS, RELEASE_RETRY_FIRST_MS * 2 ** attempt);
          const giveUp = this.closed || this.now() + delayMs >= rec.expiresAtMs;
          this.hooks.onReleaseDeleteFailed?.(rec.provider, !giveUp, err);
          if (giveUp) {
            this.warn("release (its lease will end the ticket)", err);
            return;
          }
          await sleep(delayMs);
        }
      }
    };
    const done = run();
    this.background.add(done);
    void done.finally(() => this.background.delete(done));
  }

  private trimRecords(): void {
    if (this.records.size <= this.capacity) return;
    for (const [id, r] of this.records) {
      if (this.records.size <= this.capacity) break;
      if (r.released) this.records.delete(id);
    }
  }

  private warn(what: string, err: unknown): void {
    this.hooks.log?.("warn", `${what} failed`, { err: err instanceof Error ? err.message : String(err) });
  }
}

function threadKey(agent: string, thread: string): string {
  return `${agent}\u0000${thread}`;
}

function waitLimitRefusal(r: RefusalOut, limitS: number): RefusalOut {
  return {
    ...r,
    message: `Every GPU that can serve ${r.model} stayed busy for ${limitS} s; the cluster is at capacity, ask again shortly.`,
  };
}

function publicRecord(r: Record_): AttributionOut {
  return {
    ticketId: r.ticketId,
    provider: r.provider,
    endpoint: r.endpoint,
    model: r.model,
    agent: r.agent,
    evicted: r.evicted,
    coldLoad: r.coldLoad,
    queueWaitMs: r.queueWaitMs,
    placedAtMs: r.placedAtMs,
    releasedAtMs: r.releasedAtMs,
    latencyMs: r.latencyMs,
    estimatedPromptTokens: r.estimatedPromptTokens,
    promptTokens: r.promptTokens,
    truncated: r.truncated,
    success: r.success,
    error: r.error,
    fromPlan: r.fromPlan,
  };
}
