// The sidecar's scheduler: Place, Wait, Release, Renew, Commit, EndThread and Attribute over
// the pure core (src/core) and the shared state (src/state). Transport-agnostic: the gRPC and
// Connect service (service.ts), the local proxy and the demo all call this one class, so every
// path runs the very same decisions. It composes three parts: placement (snapshot, plan,
// claim), held plans (Commit), and the call ledger (attribution and learning).
import {
  type CachedPrefix,
  type Candidate,
  cachedTokensAt,
  type Decision,
  estimateTokens,
  heldPlanUsable,
  type PlanRequest,
  plan,
  type SnapshotIndex,
  selectionPromptTokens,
} from "../core/index.js";
import { ErrorCode, KubemootError, quoteInput } from "../errors/index.js";
import { type Acquired, type CallLoopDeps, neverForwarded, placeOrWait, settleLoop } from "./call-loop.js";
import { assertCrewAllowed, assertServesAgent, type SchedulerConfig } from "./config.js";
import {
  cachedPrefixesOf,
  conversationKey,
  conversationRecord,
  worthWriting,
} from "./conversation-records.js";
import { type ConversationRef, Conversations } from "./conversations.js";
import { type FairRead, FairShare, type FairTurn } from "./fair-share.js";
import { HeldPlans, threadKey } from "./held-plans.js";
import { type CallEntry, CallLedger, type PromptEstimate } from "./ledger.js";
import {
  acquiredAttributes,
  hasPlaceSpan,
  inPlaceSpan,
  inPlaceSpanStream,
  notePlanned,
  outcomeAttributes,
} from "./place-span.js";
import { Placement } from "./placement.js";
import { releaseForeign } from "./release-foreign.js";
import { StateWrites } from "./state-writes.js";
import type { SchedulerStore } from "./store.js";
import {
  type CallCandidates,
  requireCandidates,
  resolveCandidates,
  stampBindingRevision,
  unschedulableRefusal,
} from "./thread-binding.js";
import { realTimers } from "./timers.js";
import type {
  AttributionOut,
  CommitInput,
  FairDeferral,
  Phase,
  PlaceInput,
  PlacementOut,
  PlaceOutcome,
  ProviderOps,
  ReleaseInput,
  SchedulerHooks,
  SchedulerOptions,
  WaitEventOut,
} from "./types.js";

export type { Acquired } from "./call-loop.js";
export type * from "./types.js";

export class Scheduler {
  private readonly state: SchedulerStore;
  private readonly cfg: SchedulerConfig;
  private readonly ops: ProviderOps;
  private readonly now: () => number;
  private readonly hooks: SchedulerHooks;
  private readonly ledger: CallLedger;
  private readonly held: HeldPlans;
  private readonly writes: StateWrites;
  private readonly placement: Placement;
  private readonly loopDeps: CallLoopDeps;
  private readonly discussions: SchedulerOptions["discussions"];
  private closed = false;
  /** The agent's conversations: where each last ran (a call's own is on its ledger entry). */
  private readonly conversations = new Conversations();
  /** Fair admission across crews (docs/rules/fairness.md). */
  readonly fair: FairShare;

  constructor(o: SchedulerOptions) {
    this.state = o.state;
    this.cfg = o.config;
    this.ops = o.ops;
    this.now = o.now ?? Date.now;
    this.hooks = o.hooks ?? {};
    this.discussions = o.discussions;
    this.ledger = new CallLedger(this.now, o.attributionCapacity);
    const timers = o.timers ?? realTimers;
    this.held = new HeldPlans(timers);
    this.writes = new StateWrites(this.state, this.now, timers, this.hooks);
    this.placement = new Placement({
      state: this.state,
      config: this.cfg,
      ops: this.ops,
      now: this.now,
      hooks: this.hooks,
      ledger: this.ledger,
      writes: this.writes,
      ...(o.plannerOverrides !== undefined ? { plannerOverrides: o.plannerOverrides } : {}),
    });
    this.fair = new FairShare(
      this.cfg,
      this.cfg.fair,
      this.state,
      this.now,
      timers,
      (what, err) => this.warn(what, err),
      o.instanceId,
    );
    this.loopDeps = {
      place: (input, queueWaitMs, turn) => this.place(input, queueWaitMs, turn),
      fair: this.fair,
      store: this.state,
      now: this.now,
      warn: (what, err) => this.warn(what, err),
    };
  }

  get config(): SchedulerConfig {
    return this.cfg;
  }

  /** Tickets this sidecar holds right now (claimed, not released), held plans included. */
  get activeTickets(): number {
    return this.ledger.active;
  }

  /** Conversations remembered now (docs/rules/placement.md §5.5; at most MAX_CONVERSATIONS). */
  get conversationCount(): number {
    return this.conversations.size;
  }

  /** Prompt tokens for a call: the caller's count, else chars over the learned ratio. */
  estimatePromptTokens(promptTokens: number, promptChars: number): number {
    return this.ledger.estimatePromptTokens(promptTokens, promptChars);
  }

  /** The estimate and the generous count a refusal before sending is decided on. */
  promptEstimate(promptTokens: number, promptChars: number): PromptEstimate {
    return this.ledger.promptEstimate(promptTokens, promptChars);
  }

  /** The call's candidates: its own, else its thread's published binding's, else the configured ones. */
  candidatesFor(call: {
    phase: Phase;
    candidates: Candidate[];
    agent: string;
    threadId: string;
  }): CallCandidates {
    return resolveCandidates(this.cfg, this.discussions, call);
  }

  /** PERMISSION_DENIED unless this sidecar may act for `agent` (config.ts). */
  assertServes(agent: string, field = "agent"): void {
    assertServesAgent(this.cfg, agent, field);
  }

  /** PERMISSION_DENIED unless a Commit by this sidecar may record a selection for `crew`. */
  assertCrew(crew: string): void {
    assertCrewAllowed(this.cfg, crew);
  }

  /**
   * One placement attempt; never blocks on capacity. `turn` is the call's place in the fair
   * order while it waits (the call loop's); a lone Place arrives now.
   */
  async place(input: PlaceInput, queueWaitMs = 0, turn?: FairTurn): Promise<PlaceOutcome> {
    if (hasPlaceSpan()) return this.placeOnce(input, queueWaitMs, turn);
    // A lone Place (the RPC): its own placement span (docs/tracing.md).
    return inPlaceSpan(
      input,
      this.cfg.policy,
      () => this.placeOnce(input, queueWaitMs, turn),
      (span, o) => outcomeAttributes(span, o, queueWaitMs),
    );
  }

  private async placeOnce(input: PlaceInput, queueWaitMs: number, turn?: FairTurn): Promise<PlaceOutcome> {
    this.assertOpen();
    this.assertServes(input.agent);
    const started = performance.now();
    const { tokens, generous } = this.promptEstimate(input.promptTokens, input.promptChars);
    const resolved = this.candidatesFor(input);
    const candidates = resolved.candidates;
    if (resolved.unschedulable === undefined) requireCandidates(input.phase, candidates);
    const tolerance = input.tolerance ?? this.cfg.tolerance;
    const ownKey = input.conversation
      ? conversationKey(input.agent || this.cfg.agent, input.conversation.id)
      : undefined;
    let cachedPrefixes: CachedPrefix[] = [];

    let decision: Decision | undefined;
    let outcome: PlaceOutcome | undefined =
      resolved.unschedulable !== undefined ? unschedulableRefusal(input, resolved, tokens) : undefined;
    const fairTurn = turn ?? this.fair.newTurn();
    let deferral: FairDeferral | undefined;
    let fairRead: FairRead | undefined;
    const heldKey = input.threadId ? threadKey(input.agent, input.threadId) : "";
    for (let attempt = 0; attempt <= this.cfg.claimReplans && !outcome; attempt++) {
      const read = await this.placement.read(candidates.map((c) => c.model));
      cachedPrefixes = cachedPrefixesOf(
        input.agent || this.cfg.agent,
        input.conversation?.marks,
        read.conversations,
        ownKey,
        this.ledger.inFlightCached(input.conversation) ?? this.conversations.cached(input.conversation),
        (chars) => this.ledger.estimatePromptTokens(0, chars),
      );
      let t0 = performance.now();
      const { snapshot, index: ix } = this.placement.index(read);
      let decideMs = performance.now() - t0;
      if (attempt === 0 && heldKey) {
        const taken = await this.takeHeldPlan(heldKey, ix, tokens);
        if (taken) {
          outcome = { kind: "placed", placement: taken };
          break;
        }
      }
      t0 = performance.now();
      const request: PlanRequest = {
        candidates,
        tolerance,
        promptTokens: tokens,
        generousPromptTokens: generous,
        phase: input.phase,
        cachedPrefixes,
        ...(ownKey !== undefined ? { conversationKey: ownKey } : {}),
        ...(this.fair.enabled ? { band: this.fair.bandOf(input) } : {}),
      };
      decision = plan(ix, request);
      decideMs += performance.now() - t0;
      notePlanned(attempt, ix, request);
      this.hooks.onDecision?.({ input, snapshot, index: ix, request, decision, decideMs });
      fairRead = { queue: read.queue, services: read.services, nowMs: ix.nowMs };
      if (decision.kind !== "claim") break;
      // Calls that cannot wait are never held back: they would be refused instead (fairness.md §5).
      const gate =
        input.cannotWait || input.phase === "triage"
          ? undefined
          : this.fair.gate(input, fairTurn, decision, ix, read.queue, read.services);
      if (gate !== undefined && !gate.verdict.admit) {
        deferral = { ahead: gate.verdict.ahead, freeSlots: gate.freeSlots };
        break;
      }
      const placed = await this.placement.reserve(decision, input, tokens, queueWaitMs, false);
      if (placed) outcome = { kind: "placed", placement: placed };
    }
    if (!outcome) {
      // A prompt-too-large refusal was decided on the generous count: it reports that count.
      const tooLarge = decision?.kind === "refuse" && decision.reason === "prompt-too-large";
      const held = deferral && decision?.kind === "claim" ? this.fair.heldBack(decision, deferral) : decision;
      outcome = this.placement.refusalOutcome(held, candidates, tooLarge ? generous : tokens, input);
      if (outcome.kind === "refused")
        this.fair.annotate(outcome.refusal, deferral, input, fairTurn, fairRead);
    }
    stampBindingRevision(outcome, resolved.bindingRevision || (input.bindingRevision ?? 0), this.ledger);
    if (outcome.kind === "placed" && !outcome.placement.staticFallback) {
      const p = outcome.placement;
      this.fair.admitted(p, input, tokens, fairTurn, this.ledger.get(p.ticketId));
    }
    if (outcome.kind === "placed" && input.conversation) {
      const p = outcome.placement;
      p.expectedCachedTokens = cachedTokensAt(cachedPrefixes, p.provider, p.model);
      this.ledger.noteTurn(p.ticketId, input.conversation, ownKey, p.expectedCachedTokens);
    }
    this.hooks.onPlace?.(outcome, decision, performance.now() - started, input, queueWaitMs);
    return outcome;
  }

  /**
   * The Wait RPC: the call loop's events (call-loop.ts) for up to `limitS` seconds (0 = the
   * configured limit; more is capped at it). Ends quietly when `signal` aborts.
   */
  wait(input: PlaceInput, signal: AbortSignal, limitS = 0): AsyncGenerator<WaitEventOut> {
    this.assertServes(input.agent);
    const limit = limitS > 0 ? Math.min(limitS, this.cfg.waitLimitS) : this.cfg.waitLimitS;
    return inPlaceSpanStream(
      input,
      this.cfg.policy,
      placeOrWait(this.loopDeps, input, signal, limit),
      (span, ev) => outcomeAttributes(span, ev.kind === "waiting" ? undefined : ev, 0),
    );
  }

  /**
   * Places a call, waiting in the call loop up to `limitS` seconds (0 = never wait; capped at
   * the configured limit): the proxy's and the simulation's way in. A placement that lands
   * after `signal` aborted is released at once.
   */
  async acquire(input: PlaceInput, signal: AbortSignal, limitS: number): Promise<Acquired> {
    this.assertServes(input.agent);
    const limit = Math.min(limitS, this.cfg.waitLimitS);
    const loop = () =>
      settleLoop(placeOrWait(this.loopDeps, input, signal, limit), signal, this.now, (p) =>
        this.release(neverForwarded(p.ticketId)).then(() => undefined),
      );
    return inPlaceSpan(input, this.cfg.policy, loop, acquiredAttributes);
  }

  /** Ends a ticket and learns from the call's outcome. Idempotent. */
  async release(input: ReleaseInput): Promise<boolean> {
    const known = this.ledger.get(input.ticketId);
    if (!known) {
      // Not in this process's ledger: our agent's from before a restart, or another's.
      return releaseForeign(this.state, this.cfg.agent, input.ticketId, this.hooks.log);
    }
    const e = this.ledger.finish(input);
    if (!e) return false;
    this.fair.released(e, input);
    // The copy holds the turn's prompt (and its answer) once the call ran there to its end.
    if (e.conversation && e.provider && input.outcome === "succeeded" && input.ran !== false)
      this.recordTurn(e.conversation, e, input);
    // The ledger keeps released calls for Attribute: not their prompts' marks.
    e.conversation = undefined;
    if (input.providerUnreachable === true && e.provider) {
      this.writes.markSuspect(e.provider, this.now(), this.cfg.agent || e.agent);
      this.hooks.log?.("warn", "provider unreachable: not choosing it until a newer probe", {
        provider: e.provider,
      });
    }
    if (!e.staticFallback) this.writes.deleteBehind(e);
    if (!e.staticFallback && input.outcome === "succeeded" && input.ran !== false)
      this.writes.afterSuccess(e);
    this.hooks.onRelease?.(this.ledger.attribution(e.ticketId)!);
    return true;
  }

  /**
   * Remembers where a conversation's turn ran, and tells the other sidecars when worth it: from
   * its second turn on, so that one-shot calls (each its own conversation) write nothing.
   */
  private recordTurn(ref: ConversationRef, e: CallEntry, input: ReleaseInput): void {
    const { known, published: before } = this.conversations.record(ref, e.provider, e.model);
    if (!known) return;
    const tokensOf = (chars: number) => this.ledger.estimatePromptTokens(0, chars);
    const held = (input.promptTokens || tokensOf(ref.promptChars)) + Math.max(0, input.outputTokens);
    const agent = e.agent || this.cfg.agent;
    const where = { provider: e.provider, model: e.model };
    const key = e.conversationKey ?? conversationKey(agent, ref.id);
    const next = conversationRecord(agent, key, where, ref.marks, held, this.now(), tokensOf);
    if (!worthWriting(before, next)) return;
    this.writes.publishConversation(next, agent, before, () => this.conversations.published(ref.id, next));
  }

  /** Extends a ticket's lease; returns the new expiry (epoch ms). */
  async renew(ticketId: string, extendS: number): Promise<number> {
    const e = this.ledger.get(ticketId);
    if (!e || e.released || e.staticFallback) {
      throw new KubemootError(
        ErrorCode.NotFound,
        `ticket_id: no active ticket ${quoteInput(ticketId)} on this sidecar`,
        {
          field: "ticket_id",
        },
      );
    }
    const leaseMs = (extendS > 0 ? extendS : this.cfg.leaseS) * 1000;
    const t = await this.state.tickets.renew({ provider: e.provider, ticketId }, leaseMs);
    e.expiresAtMs = t.expiresAt ?? this.now() + leaseMs;
    return e.expiresAtMs;
  }

  /** Planning at selection: publish intents and selection, hold a claimed plan, pre-load. */
  async commit(input: CommitInput): Promise<PlaceOutcome> {
    this.assertOpen();
    this.assertServes(input.agent);
    this.assertCrew(input.crew);
    if (input.threadId) this.discussions?.opened(input.agent || this.cfg.agent, input.threadId);
    const resolved = this.candidatesFor(input);
    const candidates = resolved.candidates;
    const ratio = this.ledger.charsPerToken;
    const tokens =
      input.promptChars > 0 ? estimateTokens(input.promptChars, ratio) : selectionPromptTokens(ratio);
    if (resolved.unschedulable !== undefined) return unschedulableRefusal(input, resolved, tokens);
    const models = candidates.map((c) => c.model);
    await Promise.all([
      this.state.demand.putIntents(input.agent, input.threadId, models),
      input.crew || this.cfg.crew
        ? this.state.demand.recordSelection(input.crew || this.cfg.crew, input.agent, models)
        : Promise.resolve(),
    ]);
    const key = threadKey(input.agent, input.threadId);
    await this.dropHeld(key);
    const tolerance = input.tolerance ?? this.cfg.tolerance;
    const { index: ix } = await this.placement.snapshot(models);
    const decision = plan(ix, {
      candidates,
      tolerance,
      promptTokens: tokens,
      phase: input.phase,
      ...(this.fair.enabled ? { band: this.fair.bandOf({}) } : {}),
    });
    if (decision.kind !== "claim") {
      return this.placement.refusalOutcome(decision, candidates, tokens, { ...input, cannotWait: false });
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
    const placement = await this.placement.reserve(decision, base, tokens, 0, true);
    if (!placement) return this.placement.refusalOutcome(undefined, candidates, tokens, base);
    stampBindingRevision({ kind: "placed", placement }, resolved.bindingRevision, this.ledger);
    this.held.hold(key, placement, this.cfg.heldPlanTtlMs, () => {
      void this.dropHeld(key);
    });
    if (placement.coldLoad) {
      // The pre-load overlaps the agent's prompt building; its failure only costs that overlap.
      this.ops.load(placement.endpoint, placement.model).catch((err) => this.warn("pre-load", err));
    }
    return { kind: "placed", placement };
  }

  /** Releases a thread's held plan and intents; returns how many tickets were released. */
  async endThread(agent: string, threadId: string): Promise<number> {
    this.assertServes(agent);
    this.discussions?.closed(agent || this.cfg.agent, threadId);
    const released = (await this.dropHeld(threadKey(agent, threadId))) ? 1 : 0;
    await this.state.demand.clearThread(threadId, agent).catch((err) => this.warn("clear intents", err));
    return released;
  }

  attribute(ticketId: string): AttributionOut | undefined {
    return this.ledger.attribution(ticketId);
  }

  /** Releases every held plan and active ticket of this sidecar (shutdown). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writes.close();
    for (const key of this.held.keys()) await this.dropHeld(key);
    await Promise.all(
      this.ledger.unreleased().map(async (e) => {
        this.ledger.drop(e, "sidecar shut down");
        await this.state.tickets
          .release({ provider: e.provider, ticketId: e.ticketId })
          .catch((err) => this.warn("release at shutdown", err));
      }),
    );
  }

  // --- internals -------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new KubemootError(ErrorCode.ShuttingDown, "the sidecar is shutting down");
  }

  private async takeHeldPlan(
    key: string,
    ix: SnapshotIndex,
    tokens: number,
  ): Promise<PlacementOut | undefined> {
    const p = this.held.peek(key);
    if (!p) return undefined;
    const check = heldPlanUsable(ix, { provider: p.provider, model: p.model }, tokens);
    if (!check.usable) {
      await this.dropHeld(key);
      return undefined;
    }
    this.held.take(key);
    const e = this.ledger.get(p.ticketId);
    if (e) {
      e.fromPlan = true;
      e.estimatedPromptTokens = tokens;
    }
    // The plan's lease covered the hold; give the call a call-sized lease from now.
    const expiresAtMs = await this.renew(p.ticketId, this.cfg.leaseS).catch(() => p.expiresAtMs);
    return { ...p, fromPlan: true, contextLength: check.contextLength || p.contextLength, expiresAtMs };
  }

  private async dropHeld(key: string): Promise<boolean> {
    const p = this.held.take(key);
    if (!p) return false;
    const e = this.ledger.get(p.ticketId);
    if (e && !e.released) {
      this.ledger.drop(e, "held plan released unused");
      await this.state.tickets
        .release({ provider: p.provider, ticketId: p.ticketId })
        .catch((err) => this.warn("release held plan", err));
    }
    return true;
  }

  private warn(what: string, err: unknown): void {
    this.hooks.log?.("warn", `${what} failed`, { err: err instanceof Error ? err.message : String(err) });
  }
}
