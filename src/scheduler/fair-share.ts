// Fair admission across crews (docs/rules/fairness.md): which crew and band a call belongs to,
// the gate a claim passes before it takes a slot better-ranked waiters are owed (core's
// fairGate over the demand bucket's waiter records and service counters), the waiter record a
// waiting call keeps, and this process's service counter of each crew it charged, written
// coalesced to its own key.
import { randomBytes } from "node:crypto";
import {
  agentNamespace,
  type Band,
  type ClaimDecision,
  capBand,
  crewServices,
  decayService,
  type FairShareOptions,
  type FairVerdict,
  fairGate,
  freeSlotsFor,
  jainIndex,
  type QueueDecision,
  type QueueEntry,
  type ServiceEntry,
  type SnapshotIndex,
  serviceTokens,
  waitersAhead,
} from "../core/index.js";
import { printable } from "../errors/index.js";
import type { FairShareConfig, SchedulerConfig } from "./config.js";
import type { CallEntry } from "./ledger.js";
import type { SchedulerStore } from "./store.js";
import type { SchedulerTimers, TimerHandle } from "./timers.js";
import type { FairDeferral, PlaceInput, PlacementOut, RefusalOut, ReleaseInput } from "./types.js";

/** A waiter record lives this long unless renewed (ms): a dead sidecar's waiters end with it. */
export const WAITER_LEASE_MS = 15_000;
/** A waiting call renews its record this often (ms). */
export const WAITER_RENEW_MS = 5_000;
/** Charges within this long go to the bucket in one write of the crew's counter (ms). */
const COUNTER_LINGER_MS = 100;
/** A counter is dropped from the bucket after this many half-lives unwritten: it reads ~0 by then. */
const COUNTER_TTL_HALF_LIVES = 10;

/** One call's place in the fair order while it waits (kept by the call loop). */
export interface FairTurn {
  /** The id of the call's waiter record: this process's instance and a sequence number. */
  id: string;
  /** When the call arrived (epoch ms): its place among waiters of the same crew and band. */
  since: number;
  /** Since when it has been held back while slots were free (the handoff clock). */
  deferredWhileFreeSinceMs?: number | undefined;
  /** Waiting calls ranked ahead of it when it began to wait (Attribution.queue_position). */
  position?: number | undefined;
}

/** What a decision read that the fair order needs (the waiters and counters, at its time). */
export interface FairRead {
  queue: readonly QueueEntry[];
  services: () => readonly ServiceEntry[];
  nowMs: number;
}

export interface FairView {
  services: ReadonlyMap<string, { service: number; weight: number }>;
  waiting: ReadonlyMap<string, ReadonlyMap<Band, number>>;
  jain: number;
}

interface Counter {
  service: number;
  updatedAt: number;
  timer?: TimerHandle | undefined;
}

export class FairShare {
  /** This process's counters' key token: counters of processes that come and go never collide. */
  readonly instance: string;
  private seq = 0;
  private readonly counters = new Map<string, Counter>();
  /** The last services and waiters seen, per crew, for the metrics (refreshed by each gate). */
  private lastServices = new Map<string, { service: number; weight: number }>();
  private lastWaiters: readonly QueueEntry[] = [];

  constructor(
    private readonly cfg: SchedulerConfig,
    private readonly fair: FairShareConfig,
    private readonly store: Pick<SchedulerStore, "demand">,
    private readonly now: () => number,
    private readonly timers: SchedulerTimers,
    private readonly warn: (what: string, err: unknown) => void,
    instance?: string,
  ) {
    this.instance = instance ?? randomBytes(9).toString("base64url");
  }

  /** A new call's turn: arriving now, its id unique to this process (and ordered by arrival). */
  newTurn(): FairTurn {
    return { id: `${this.instance}-${++this.seq}`, since: this.now() };
  }

  get enabled(): boolean {
    return this.fair.enabled;
  }

  get options(): FairShareOptions {
    return this.fair.options;
  }

  /** The call's crew: KUBEMOOT_CREW, else its agent's namespace (docs/rules/fairness.md §2). */
  crewOf(input: Pick<PlaceInput, "agent">): string {
    if (this.cfg.crew !== "") return this.cfg.crew;
    return agentNamespace(input.agent || this.cfg.agent) || "_";
  }

  /** The call's band: its own, else the sidecar's, capped at what the crew may ask for. */
  bandOf(input: Pick<PlaceInput, "priority">): Band {
    return capBand(input.priority ?? this.fair.band, this.fair.maxBand);
  }

  /**
   * The gate (docs/rules/fairness.md §3) for a claim: undefined when it may go (nobody waits
   * for the model ahead of it, or fairness is off), else why it must wait.
   */
  gate(
    input: PlaceInput,
    turn: FairTurn,
    d: ClaimDecision,
    ix: SnapshotIndex,
    queue: readonly QueueEntry[],
    counters: () => readonly ServiceEntry[],
  ): { verdict: FairVerdict; freeSlots: number } | undefined {
    // A new copy (a cold load, an eviction) adds slots nobody waits for yet: the calls ahead
    // chose otherwise (fairness.md §5). Only an existing copy's slots are handed out in order.
    if (!this.fair.enabled || d.cold || Object.keys(d.evicts).length > 0) return undefined;
    const nowMs = ix.nowMs;
    const waiters = queue.filter((w) => w.model === d.model && w.id !== turn.id && w.expiresAt > nowMs);
    if (waiters.length === 0) return undefined;
    const services = crewServices(counters(), nowMs, this.fair.options.halfLifeMs);
    this.lastServices = services;
    this.lastWaiters = waiters;
    const freeSlots = freeSlotsFor(ix, d);
    const verdict = fairGate({
      call: this.callOf(input, turn),
      waiters,
      services,
      freeSlots,
      deferredWhileFreeSinceMs: turn.deferredWhileFreeSinceMs,
      nowMs,
      options: this.fair.options,
    });
    return { verdict, freeSlots };
  }

  /**
   * A refusal's place in the fair order: the gate's `ahead` when it held the claim back, else,
   * for a refusal worth waiting out, the waiting calls of its model ranked ahead of the call.
   */
  annotate(
    r: RefusalOut,
    deferral: FairDeferral | undefined,
    input: PlaceInput,
    turn: FairTurn,
    read: FairRead | undefined,
  ): void {
    if (deferral !== undefined) {
      r.fairDeferral = deferral;
      r.queuePosition = deferral.ahead;
      return;
    }
    if (!this.fair.enabled || !r.waitable || read === undefined) return;
    const waiters = read.queue.filter((w) => w.model === r.model && w.id !== turn.id);
    if (waiters.length === 0) return;
    const services = crewServices(read.services(), read.nowMs, this.fair.options.halfLifeMs);
    r.queuePosition = waitersAhead(
      this.callOf(input, turn),
      waiters,
      services,
      read.nowMs,
      this.fair.options,
    );
  }

  /** The waiter record of a call that waits for `model` (renewed by writing it again). */
  waiter(input: PlaceInput, turn: FairTurn, model: string): QueueEntry {
    const c = this.callOf(input, turn);
    return { kind: "queue", model, ...c, expiresAt: this.now() + WAITER_LEASE_MS };
  }

  /** Charges `crew` the service of a call: its prompt at admission, its output at release. */
  charge(crew: string, agent: string, tokens: number): void {
    if (!this.fair.enabled || tokens === 0) return;
    const now = this.now();
    const c = this.counters.get(crew) ?? { service: 0, updatedAt: now };
    c.service = Math.max(0, decayService(c.service, c.updatedAt, now, this.fair.options.halfLifeMs) + tokens);
    c.updatedAt = now;
    this.counters.set(crew, c);
    if (c.timer !== undefined) return;
    c.timer = this.timers.after(COUNTER_LINGER_MS, () => {
      c.timer = undefined;
      this.writeCounter(crew, agent, c);
    });
  }

  /** The decision a claim held back by the gate answers with: wait for a slot, its turn to come. */
  heldBack(d: ClaimDecision, deferral: FairDeferral): QueueDecision {
    return {
      kind: "queue",
      provider: d.provider,
      model: d.model,
      estimatedWaitS: 0,
      message: `${deferral.ahead} waiting call(s) ranked ahead of this one (a higher band, or less service for their crew's weight) are owed the free slots of ${printable(d.model)}; it waits its turn.`,
    };
  }

  /**
   * A placed call's band and queue position, and its crew charged its prompt (fairness.md §4):
   * at admission, so that a crew admitted many calls at once pays before they end.
   */
  admitted(
    p: PlacementOut,
    input: PlaceInput,
    tokens: number,
    turn: FairTurn,
    e: CallEntry | undefined,
  ): void {
    p.priority = this.bandOf(input);
    p.queuePosition = turn.position ?? 0;
    if (!e) return;
    e.priority = p.priority;
    e.queuePosition = p.queuePosition;
    if (e.fairCrew !== undefined) return; // a held plan taken: charged when it was claimed
    const charge = serviceTokens(tokens, 0);
    e.fairCrew = this.crewOf(input);
    e.fairCharged = charge;
    this.charge(e.fairCrew, input.agent || this.cfg.agent, charge);
  }

  /**
   * The rest of a released call's service (fairness.md §4): twice its output, and its prompt as
   * the engine counted it in place of the estimate charged at admission; a call that never ran
   * is refunded.
   */
  released(e: CallEntry, input: ReleaseInput): void {
    if (e.fairCrew === undefined) return;
    const charged = e.fairCharged ?? 0;
    const prompt = input.promptTokens > 0 ? input.promptTokens : charged;
    const due = input.ran === false ? 0 : serviceTokens(prompt, input.outputTokens);
    this.charge(e.fairCrew, e.agent || this.cfg.agent, due - charged);
  }

  /**
   * What the last contended decision read (metrics): the fleet's service per crew, the waiting
   * calls per crew and band of the model it was about, and Jain's index of the backlogged
   * crews' service over their weights.
   */
  view(): FairView {
    const waiting = new Map<string, Map<Band, number>>();
    for (const w of this.lastWaiters) {
      const byBand = waiting.get(w.crew) ?? new Map<Band, number>();
      byBand.set(w.band, (byBand.get(w.band) ?? 0) + 1);
      waiting.set(w.crew, byBand);
    }
    const shares = [...waiting.keys()].map((crew) => {
      const s = this.lastServices.get(crew);
      return s === undefined ? 0 : s.service / s.weight;
    });
    return { services: this.lastServices, waiting, jain: jainIndex(shares) };
  }

  private callOf(input: PlaceInput, turn: FairTurn) {
    return {
      id: turn.id,
      crew: this.crewOf(input),
      band: this.bandOf(input),
      weight: this.fair.weight,
      since: turn.since,
    };
  }

  private writeCounter(crew: string, agent: string, c: Counter): void {
    const halfLife = this.fair.options.halfLifeMs;
    const entry: ServiceEntry = {
      kind: "svc",
      crew,
      weight: this.fair.weight,
      service: c.service,
      updatedAt: c.updatedAt,
      expiresAt: c.updatedAt + COUNTER_TTL_HALF_LIVES * halfLife,
    };
    this.store.demand
      .putService(entry, agent || this.cfg.agent, this.instance)
      .catch((err) => this.warn("service counter", err));
  }
}
