// Placement: read the shared state into the core's snapshot, let the core decide, reserve the
// decided ticket (claim first, then unload its planned victims), and turn anything that is
// not a claim into the refusal Place answers — or a cannot-wait call's static fallback.
import { randomUUID } from "node:crypto";
import {
  afterRefusal,
  aggregateDemand,
  type Candidate,
  type ClaimDecision,
  type ConversationIndex,
  DEFAULT_COST_WEIGHTS,
  DEFAULT_ENGINE,
  type Decision,
  type DemandEntry,
  indexSnapshot,
  lostRaceRefusal,
  type PlacementSnapshot,
  type PlannerOptions,
  type ProviderState,
  type QueueEntry,
  type Residency,
  refusalOf,
  type ServiceEntry,
  type SnapshotIndex,
  TICKET_LEASE_MARGIN_S,
  type Ticket,
} from "../core/index.js";
import { printable } from "../errors/index.js";
import type { SchedulerConfig, StaticBinding } from "./config.js";
import type { CallLedger } from "./ledger.js";
import { noteClaimConflict } from "./place-span.js";
import type { StateWrites } from "./state-writes.js";
import type { SchedulerStore } from "./store.js";
import type {
  Phase,
  PlaceInput,
  PlacementOut,
  PlaceOutcome,
  ProviderOps,
  RefusalOut,
  SchedulerHooks,
} from "./types.js";

/** What one decision reads of the shared state. */
export interface StateRead {
  providers: ProviderState[];
  tickets: Ticket[];
  residencies: Residency[];
  suspects: Map<string, number>;
  demand: DemandEntry[];
  /** Conversations the sidecars published (docs/rules/placement.md §5.5). */
  conversations: ConversationIndex;
  /** Waiting calls of the models read, and the crews' service counters (docs/rules/fairness.md). */
  queue: QueueEntry[];
  /** Read only when a model has waiters: counters move with every admission. */
  services: () => ServiceEntry[];
}

export interface PlacementDeps {
  state: SchedulerStore;
  config: SchedulerConfig;
  ops: ProviderOps;
  now: () => number;
  hooks: SchedulerHooks;
  ledger: CallLedger;
  writes: StateWrites;
  /** Planner knobs beyond the configuration's (SchedulerOptions.plannerOverrides). */
  plannerOverrides?: Partial<PlannerOptions>;
}

export class Placement {
  private readonly plannerOptions: Partial<PlannerOptions>;

  /** The configured candidates' declared sizes (the binder's Model.spec.vramMib). */
  private readonly declared: ReadonlyMap<string, number> | undefined;

  constructor(private readonly d: PlacementDeps) {
    const declared = new Map<string, number>();
    for (const c of [...d.config.candidatesMulling, ...d.config.candidatesTriage]) {
      if (c.vramMib !== undefined && !declared.has(c.model)) declared.set(c.model, c.vramMib);
    }
    this.declared = declared.size > 0 ? declared : undefined;
    this.plannerOptions = {
      policy: d.config.policy,
      ...(d.config.costWeights ? { weights: { ...DEFAULT_COST_WEIGHTS, ...d.config.costWeights } } : {}),
      ...d.plannerOverrides,
    };
  }

  /**
   * Reads the shared state a decision among `models` needs (each read at most 200 ms old): the
   * states and tickets of every provider that offers one of them (docs/rules/state.md §10.1), and the
   * demand of those models and of the models resident where they run (§10.2).
   */
  async read(models: readonly string[]): Promise<StateRead> {
    const { state } = this.d;
    const [providers, { tickets, residencies, suspects, conversations }, demand] = await Promise.all([
      state.providers.list(models),
      state.tickets.everything(models),
      state.demand.snapshot(models),
    ]);
    return {
      providers,
      tickets,
      residencies,
      suspects,
      demand: demand.entries,
      conversations,
      queue: demand.queue,
      services: () => state.demand.services(),
    };
  }

  /**
   * The read as the core sees it, with this sidecar's own health observations. Synchronous, so
   * that indexing and planning together are one uninterrupted step (the decision's cost).
   */
  index(r: StateRead): { snapshot: PlacementSnapshot; index: SnapshotIndex } {
    const nowMs = this.d.now();
    const snapshot: PlacementSnapshot = {
      providers: r.providers,
      tickets: r.tickets,
      residencies: r.residencies,
      demand: aggregateDemand(r.demand, nowMs),
      health: this.d.ledger.health,
      suspects: mergeSuspects(r.suspects, this.d.ledger.suspects),
      conversations: r.conversations,
      ...(this.declared !== undefined ? { declaredVramMiB: this.declared } : {}),
      nowMs,
    };
    return { snapshot, index: indexSnapshot(snapshot, this.plannerOptions) };
  }

  /** read() then index(). */
  async snapshot(models: readonly string[]): Promise<{ snapshot: PlacementSnapshot; index: SnapshotIndex }> {
    return this.index(await this.read(models));
  }

  /**
   * Reserves what the decision chose: claims its ticket (the state layer's atomic claim), then
   * unloads its planned victims, and records the call in the ledger. Undefined = the claim lost.
   */
  async reserve(
    d: ClaimDecision,
    input: PlaceInput,
    tokens: number,
    queueWaitMs: number,
    forPlan: boolean,
  ): Promise<PlacementOut | undefined> {
    const { config, state, hooks, ops } = this.d;
    // A held plan's lease outlives its hold by the call lease's margin, as a call's does its timeout.
    const leaseMs = forPlan ? config.heldPlanTtlMs + TICKET_LEASE_MARGIN_S * 1000 : config.leaseS * 1000;
    const res = await state.tickets.claim({
      provider: d.provider,
      model: d.model,
      modelFootprintMiB: d.footprintMiB,
      evicts: d.evicts,
      leaseMs,
      ...(d.slots !== undefined ? { slots: d.slots } : {}),
    });
    if (!res.ok) {
      hooks.onClaimLost?.(d.provider, res.reason);
      noteClaimConflict(d.provider, res.reason);
      return undefined;
    }
    const evicted: string[] = [];
    for (const victim of Object.keys(d.evicts)) {
      try {
        await ops.unload(d.endpoint, victim);
        await state.tickets.clearResidency(d.provider, victim);
        this.d.writes.forgetOverlay(d.provider, victim);
        evicted.push(victim);
        hooks.onEvict?.(d.provider, victim, true);
      } catch (err) {
        // The engine evicts by itself when the load needs the room; the claim already holds it.
        hooks.onEvict?.(d.provider, victim, false, err);
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
      expiresAtMs: res.ticket.expiresAt ?? this.d.now() + leaseMs,
      fromPlan: false,
      staticFallback: false,
      expectedCachedTokens: 0,
      // The copy the claim was decided on: the engine the agent's client must speak to.
      engine: state.providers.peek(d.provider)?.engine ?? DEFAULT_ENGINE,
    };
    this.d.ledger.remember(placement, input.agent, tokens, queueWaitMs);
    return placement;
  }

  /**
   * What Place answers when it did not claim: the decision's refusal (a lost race when there is
   * none), or, for a call that cannot wait, its static endpoint where the call policy allows.
   */
  refusalOutcome(
    decision: Decision | undefined,
    candidates: Candidate[],
    tokens: number,
    input: { phase: Phase; cannotWait: boolean; agent: string },
  ): PlaceOutcome {
    const r = (decision ? refusalOf(decision) : undefined) ?? lostRaceRefusal(candidates[0]?.model ?? "");
    // The message may name a model a caller sent (the proxy's body): printable only.
    const refusal: RefusalOut = { ...r, message: printable(r.message), promptTokens: tokens };
    const configured = input.phase === "triage" ? this.d.config.staticTriage : this.d.config.staticMulling;
    // A static endpoint outside the allowlist is as good as none (the sidecar warned at start).
    const allowed = configured && (this.d.config.providerEndpoints?.allows(configured.endpoint) ?? true);
    const fallback = allowed ? configured : undefined;
    const next = afterRefusal(refusal, {
      phase: input.phase,
      cannotWait: input.cannotWait,
      hasStaticBinding: fallback !== undefined,
      waitLimitS: this.d.config.waitLimitS,
    });
    if (next === "static-fallback" && fallback) {
      return { kind: "placed", placement: this.staticPlacement(fallback, input.agent, tokens) };
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
      expectedCachedTokens: 0,
      engine: "",
    };
    this.d.ledger.remember(placement, agent, tokens, 0);
    return placement;
  }
}

/** The shared marks and this sidecar's own, the later of the two per provider. */
function mergeSuspects(shared: Map<string, number>, own: ReadonlyMap<string, number>): Map<string, number> {
  if (own.size === 0) return shared;
  const out = new Map(shared);
  for (const [provider, ms] of own) out.set(provider, Math.max(out.get(provider) ?? 0, ms));
  return out;
}
