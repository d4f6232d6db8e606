// The model of fair admission that src/core/fair-share.property.test.ts checks
// (docs/rules/fairness.md §6–§8): a virtual clock, sidecars sharing one store of waiter records,
// service counters and a model's claimed slots; every decision is the core's own gate. No real
// timers, no I/O.
import {
  crewServices,
  DEFAULT_FAIR_SHARE,
  decayService,
  type FairCall,
  type FairVerdict,
  fairGate,
  serviceTokens,
} from "../../src/core/fair-share.js";
import type { Band, QueueEntry, ServiceEntry } from "../../src/core/shapes.js";
export const O = DEFAULT_FAIR_SHARE;
export const BANDS: readonly Band[] = ["interactive", "standard", "batch"];
/** A waiter record's lease and its renewal (WAITER_LEASE_MS, WAITER_RENEW_MS of the scheduler). */
export const LEASE_MS = 15_000;
export const RENEW_MS = 5_000;
/** A waiting call plans again at least this often (REPLAN_EVERY_MS of the call loop). */
export const REPLAN_MS = 1_000;
/** A service counter is dropped after ten half-lives unwritten (the scheduler's counter TTL). */
export const COUNTER_TTL_MS = 10 * O.halfLifeMs;
export const MAX_STALENESS = 4;
export const MAX_STEPS = 200_000;
/** Property 3's calls arriving together at the start all arrive before this (ms). */
export const BURST_END_MS = 40;

export interface CallSpec {
  at: number;
  sidecar: number;
  crew: number;
  band: Band;
  prompt: number;
  output: number;
  durationMs: number;
}

export interface DeathSpec {
  sidecar: number;
  at: number;
  /** The dead sidecar's running calls hold their slots this much longer (their ticket leases). */
  leaseMs: number;
}

export interface Scenario {
  slots: number;
  sidecars: number;
  /** Per crew. */
  weights: number[];
  calls: CallSpec[];
  deaths: DeathSpec[];
  /** How many steps old each attempt's view is (consumed in turn, cyclically); 0 is fresh. */
  staleness: number[];
  /** Draws for the order in which waiters try again after a change (cyclically). */
  order: number[];
  /** Every view is fresh from this time on (ms). */
  freshFrom: number;
}

export interface Variant {
  /** false: a call claims whenever its view shows a free slot, without fairGate. */
  gate: boolean;
  /** false: the claim trusts the view's free slots instead of a compare-and-set. */
  cas: boolean;
  /** false: a waiter tries again on slot changes only (no replan or handoff timer). */
  timers: boolean;
}

export const REAL: Variant = { gate: true, cas: true, timers: true };

/** What an attempt reads: the store as of some step. */
export interface View {
  queue: readonly QueueEntry[];
  svc: readonly ServiceEntry[];
  used: number;
}

export type Phase = "pending" | "waiting" | "running" | "done" | "lost";

export interface SimCall {
  readonly spec: CallSpec;
  readonly id: string;
  readonly crew: string;
  readonly weight: number;
  phase: Phase;
  admittedAt: number | undefined;
  /** While running: when its slot frees (completion, or a dead sidecar's lease end). */
  endsAt: number;
  nextAttemptAt: number;
  deferredWhileFreeSinceMs: number | undefined;
  /** When its record is next written: -∞ until its first refusal. */
  renewAt: number;
}

export interface Admission {
  call: SimCall;
  verdict: FairVerdict;
  /** Slots truly free just before the claim. */
  freeBefore: number;
}

export interface Observer {
  onAdmit?(f: Fleet, a: Admission): void;
  onStep?(f: Fleet): void;
}

export const crewName = (i: number) => `crew${i}`;

export function fairCall(c: SimCall): FairCall {
  return { id: c.id, crew: c.crew, band: c.spec.band, weight: c.weight, since: c.spec.at };
}

export class Fleet {
  now = 0;
  /** The shared store: waiter records by call id, counters by process and crew, claimed slots. */
  readonly queue = new Map<string, QueueEntry>();
  readonly svc = new Map<string, ServiceEntry>();
  used = 0;
  readonly calls: SimCall[];
  readonly byId = new Map<string, SimCall>();
  readonly deadAt = new Map<number, number>();
  private readonly deaths: DeathSpec[];
  /** The store at the end of each of the last steps, oldest first. */
  private readonly history: View[] = [{ queue: [], svc: [], used: 0 }];
  private live: View | undefined;
  private readonly cursor = { stale: 0, order: 0 };
  private steps = 0;

  constructor(
    readonly sc: Scenario,
    readonly variant: Variant = REAL,
    private readonly obs: Observer = {},
  ) {
    this.calls = sc.calls.map((spec, i) => ({
      spec,
      id: `c${String(i).padStart(3, "0")}`,
      crew: crewName(spec.crew),
      weight: sc.weights[spec.crew]!,
      phase: "pending",
      admittedAt: undefined,
      endsAt: Number.POSITIVE_INFINITY,
      nextAttemptAt: Number.POSITIVE_INFINITY,
      deferredWhileFreeSinceMs: undefined,
      renewAt: Number.NEGATIVE_INFINITY,
    }));
    for (const c of this.calls) this.byId.set(c.id, c);
    this.deaths = [...sc.deaths].sort((a, b) => a.at - b.at);
  }

  /** Processes every event up to `untilMs`, one step each. */
  run(untilMs: number): void {
    for (;;) {
      const next = this.next();
      if (next === undefined || next.at > untilMs) return;
      if (++this.steps > MAX_STEPS) throw new Error("the model did not settle");
      this.now = next.at;
      next.fire();
      this.history.push(this.view());
      if (this.history.length > MAX_STALENESS + 1) this.history.shift();
      this.obs.onStep?.(this);
    }
  }

  /** The live store as a view (cached until the next write). */
  view(): View {
    this.live ??= { queue: [...this.queue.values()], svc: [...this.svc.values()], used: this.used };
    return this.live;
  }

  /** The earliest event: slot frees, then deaths, arrivals, waiters' timers; ties by call order. */
  private next(): { at: number; fire: () => void } | undefined {
    let best: { at: number; rank: number; fire: () => void } | undefined;
    const offer = (at: number, rank: number, fire: () => void) => {
      if (at === Number.POSITIVE_INFINITY) return;
      if (best === undefined || at < best.at || (at === best.at && rank < best.rank))
        best = { at, rank, fire };
    };
    for (const c of this.calls) {
      if (c.phase === "running") offer(c.endsAt, 0, () => this.end(c));
      else if (c.phase === "pending") offer(c.spec.at, 2, () => this.arrive(c));
      else if (c.phase === "waiting" && this.variant.timers) offer(c.nextAttemptAt, 3, () => this.wake(c));
    }
    const d = this.deaths[0];
    if (d !== undefined)
      offer(d.at, 1, () => {
        this.deaths.shift();
        this.die(d);
      });
    return best;
  }

  private arrive(c: SimCall): void {
    if (this.deadAt.has(c.spec.sidecar)) {
      c.phase = "lost";
      return;
    }
    c.phase = "waiting";
    if (this.attempt(c)) this.changed();
  }

  private wake(c: SimCall): void {
    if (this.attempt(c)) this.changed();
  }

  /** The call's slot frees: completed (charged the rest of its service), or its dead holder's lease ended. */
  private end(c: SimCall): void {
    this.used--;
    this.live = undefined;
    if (this.deadAt.has(c.spec.sidecar)) c.phase = "lost";
    else {
      c.phase = "done";
      const { prompt, output } = c.spec;
      this.charge(c, serviceTokens(prompt, output) - serviceTokens(prompt, 0));
    }
    this.changed();
  }

  private die(d: DeathSpec): void {
    this.deadAt.set(d.sidecar, this.now);
    for (const c of this.calls) {
      if (c.spec.sidecar !== d.sidecar) continue;
      if (c.phase === "waiting") c.phase = "lost";
      else if (c.phase === "running") c.endsAt = this.now + d.leaseMs;
    }
  }

  /** A slot changed: every waiter tries again, in a drawn order, until a round admits nobody. */
  private changed(): void {
    for (let round = 0; ; round++) {
      if (round > this.calls.length + 1) throw new Error("a state change did not settle");
      let admitted = false;
      for (const c of this.shuffled(this.calls.filter((w) => w.phase === "waiting")))
        if (c.phase === "waiting" && this.attempt(c)) admitted = true;
      if (!admitted) return;
    }
  }

  /** One placement attempt of a waiting call; true when it claimed a slot. */
  private attempt(c: SimCall): boolean {
    const now = this.now;
    const k = now < this.sc.freshFrom ? this.draw(this.sc.staleness, "stale") : 0;
    const view = k === 0 ? this.view() : this.history[Math.max(0, this.history.length - k)]!;
    const freeSlots = Math.max(0, this.sc.slots - view.used);
    const verdict: FairVerdict = this.variant.gate
      ? fairGate({
          call: fairCall(c),
          waiters: view.queue,
          services: crewServices(view.svc, now, O.halfLifeMs),
          freeSlots,
          deferredWhileFreeSinceMs: c.deferredWhileFreeSinceMs,
          nowMs: now,
          options: O,
        })
      : freeSlots > 0
        ? { admit: true, ahead: 0, handedOff: false }
        : { admit: false, ahead: 0 };
    if (verdict.admit && this.claim(freeSlots)) {
      this.admit(c, verdict);
      return true;
    }
    // It waits: its record is written at its first refusal and renewed when due (call-loop.ts).
    if (now >= c.renewAt) {
      this.queue.set(c.id, { kind: "queue", model: "m", ...fairCall(c), expiresAt: now + LEASE_MS });
      this.live = undefined;
      c.renewAt = now + RENEW_MS;
    }
    const owed = !verdict.admit && freeSlots > 0;
    c.deferredWhileFreeSinceMs = owed ? (c.deferredWhileFreeSinceMs ?? now) : undefined;
    c.nextAttemptAt = now + (owed ? O.handoffMs + 1 : REPLAN_MS);
    return false;
  }

  /** The claim on the true slot count: a compare-and-set (or, in a broken variant, the view's word). */
  private claim(viewFree: number): boolean {
    return this.variant.cas ? this.used < this.sc.slots : viewFree > 0;
  }

  private admit(c: SimCall, verdict: FairVerdict): void {
    const freeBefore = this.sc.slots - this.used;
    this.used++;
    this.queue.delete(c.id);
    this.live = undefined;
    c.phase = "running";
    c.admittedAt = this.now;
    c.endsAt = this.now + c.spec.durationMs;
    c.deferredWhileFreeSinceMs = undefined;
    this.charge(c, serviceTokens(c.spec.prompt, 0));
    this.obs.onAdmit?.(this, { call: c, verdict, freeBefore });
  }

  /** Adds to the crew's counter of the call's own sidecar, decayed to now first. */
  private charge(c: SimCall, tokens: number): void {
    const key = `${c.spec.sidecar}/${c.crew}`;
    const prev = this.svc.get(key);
    const before =
      prev === undefined ? 0 : decayService(prev.service, prev.updatedAt, this.now, O.halfLifeMs);
    this.svc.set(key, {
      kind: "svc",
      crew: c.crew,
      weight: c.weight,
      service: before + tokens,
      updatedAt: this.now,
      expiresAt: this.now + COUNTER_TTL_MS,
    });
    this.live = undefined;
  }

  private shuffled<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = this.draw(this.sc.order, "order") % (i + 1);
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  }

  private draw(stream: readonly number[], which: "stale" | "order"): number {
    return stream.length === 0 ? 0 : stream[this.cursor[which]++ % stream.length]!;
  }
}
