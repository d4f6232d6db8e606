// One simulated run: a scenario's traffic against simulated Ollama GPUs under one policy.
//
// "ours" is the sidecar's loop over the very same src/core decisions: each call builds a
// PlacementSnapshot from the simulated world as the shared state would hold it — provider
// states as the publisher probes them (every 10 s by default), tickets of calls in flight
// (coldLoad when the model was not resident, with planned victims), residency overlays written
// after each successful call (living until the tickets bucket's 10 min TTL or our own
// unload), demand (wait entries of waiting agents, use and selection rates, intents of the
// discussions in progress) and each agent's own health (latency EMA, success, circuit) — then
// `indexSnapshot` + `plan`. A claim starts the call at the chosen GPU (planned victims are
// unloaded first); queue or wait-for-memory makes the agent wait and retry on the next state
// change (a ticket claimed or released, an overlay written, a probe that saw something new),
// up to the 90 s limit, then stand aside; model-too-large and prompt-too-large stand aside at once.
//
// Baselines send the preferred model only and leave queueing and eviction to Ollama.
//
// Not modelled: planning at selection (Commit's held plans and pre-loads), the triage phase
// and cannot-wait static fallbacks, engine failures, prompts longer than a context (every
// scenario's prompts fit), and compute shared between two runners on one card (as in the
// emulator, each loaded model serves its own slots at full speed).
import {
  aggregateDemand,
  bumpRate,
  type Candidate,
  CLOSED_CIRCUIT,
  claimFits,
  type Decision,
  type DemandEntry,
  GPU_WAIT_LIMIT_S,
  INTENT_TTL_MS,
  indexSnapshot,
  inTolerance,
  type ModelDemand,
  NO_SUCCESS_SAMPLES,
  type PlacementSnapshot,
  type PlannerOptions,
  type PlanRequest,
  type ProviderHealth,
  type ProviderState,
  plan,
  RATE_ENTRY_TTL_MS,
  type RefusalReason,
  type Residency,
  recordFailure,
  recordLatency,
  recordOutcome,
  recordSuccess,
  refusalOf,
  type SnapshotIndex,
  type Ticket,
  usableMiB,
  WAIT_ENTRY_TTL_MS,
} from "../core/index.js";
import type { JobResult } from "../emulator/index.js";
import { EventLoop } from "./events.js";
import { modelWithFootprint, SimOllama, type UnloadCause } from "./ollama.js";
import { Rng } from "./prng.js";
import type { Scenario, ScenarioAgent, ScenarioModel } from "./scenarios.js";
import { mean, percentileSorted, round } from "./stats.js";
import { type Discussion, generateWorkload, type Turn } from "./workload.js";

export type PolicyName = "ours" | "static" | "round-robin" | "least-busy" | "random";
export const POLICIES: readonly PolicyName[] = ["ours", "static", "round-robin", "least-busy", "random"];

export interface SimOptions {
  scenario: Scenario;
  policy: PolicyName;
  seed: number;
  /** Planner knobs for experiments (cost weights, default call time, ...). */
  planner?: Partial<PlannerOptions>;
  /**
   * Extra cost terms for experiments (CrewSchedulingPolicy-style biases), built per decision
   * from the indexed snapshot so that a term can read the state (e.g. a provider's tickets).
   */
  costBias?: (ix: SnapshotIndex) => PlanRequest["costBias"];
  /** Publisher probe interval (ms); 0 publishes every change at once. Default 10 000. */
  probeIntervalMs?: number;
  /** Lifetime of a residency overlay after its last write (ms); default 10 min (bucket TTL). */
  overlayTtlMs?: number;
  /**
   * Experiment: drop an overlay once a probe newer than its write no longer lists the model
   * (the overlay then only bridges the gap until the publisher has seen the load).
   */
  overlaySupersededByProbe?: boolean;
  /**
   * Publish each model's footprint as its declared `Model.spec.vramMib` (default true). Without
   * it, a model never seen loaded is sized from its on-disk size × 1.2 (docs/rules/placement.md §2).
   */
  declareVram?: boolean;
  /** OLLAMA_MAX_LOADED_MODELS of every GPU (0 = unlimited); default 3, Ollama's per-GPU default. */
  maxLoadedModels?: number;
  /**
   * Experiment: also publish each GPU's OLLAMA_MAX_LOADED_MODELS as `maxLoadedModels` in its
   * provider state (a field the core does not read today).
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

const EPOCH_MS = Date.UTC(2026, 0, 1);
const OVERLAY_TTL_MS = 10 * 60_000;
const DEFAULT_PROBE_MS = 10_000;

interface CallState {
  id: string;
  turn: TurnState;
  index: number;
  arrivalMs: number;
  record: CallRecord;
  /** Ours: when the current wait began (undefined while not waiting). */
  waitingSince?: number;
  waitModel?: string;
  deadline?: { cancel(): void };
}

interface TurnState {
  discussion: Discussion;
  turn: Turn;
  agent: ScenarioAgent;
  acceptable: Candidate[];
  next: number;
  ended: boolean;
}

interface OverlayEntry {
  residency: Residency;
  writtenAtMs: number;
  expiresAtMs: number;
}

function iso(ms: number): string {
  return new Date(EPOCH_MS + ms).toISOString();
}

function hrNow(): bigint {
  return process.hrtime.bigint();
}

export function simulate(opts: SimOptions): SimResult {
  return new World(opts).run();
}

class World {
  private readonly sc: Scenario;
  private readonly loop = new EventLoop();
  private readonly gpus: SimOllama[] = [];
  private readonly gpuByName = new Map<string, SimOllama>();
  private readonly models: Map<string, ScenarioModel>;
  private readonly record: boolean;
  private readonly measure: boolean;
  private readonly probeMs: number;
  private readonly overlayTtlMs: number;
  private readonly waitLimitMs: number;
  private readonly declared: ReadonlyMap<string, number> | undefined;

  private readonly calls: CallRecord[] = [];
  private readonly decisions: DecisionRecord[] = [];
  private readonly unloads: UnloadRecord[] = [];
  private readonly loadRecs: LoadRecord[] = [];
  private readonly decisionUs: number[] = [];
  private idealMs: number[] = [];
  private loadsN = 0;
  private loadedMiB = 0;
  private evictPlanned = 0;
  private evictOllama = 0;
  private expiries = 0;
  private readonly standAsides: Record<RefusalReason, number> = {
    "gpu-busy": 0,
    "model-too-large": 0,
    "prompt-too-large": 0,
  };
  private callSeq = 0;
  /** Discussions not started yet plus turns not ended: the publisher probes while any remain. */
  private outstanding = 0;
  private lastDoneMs = 0;

  // ── ours: the shared state as the sidecars see it ──
  private readonly published = new Map<string, ProviderState>();
  private readonly publishedSig = new Map<string, string>();
  private providersArr: ProviderState[] = [];
  private readonly tickets = new Map<string, Ticket>();
  private ticketsArr: Ticket[] | undefined;
  private ticketSeq = 0;
  private readonly overlays = new Map<string, OverlayEntry>();
  private readonly demand = new Map<string, DemandEntry>();
  private demandRev = 0;
  private demandCache: { rev: number; at: number; value: Map<string, ModelDemand> } | undefined;
  private readonly health = new Map<string, Map<string, ProviderHealth>>();
  private readonly waiters: CallState[] = [];
  private changed = false;
  private readonly ticketOf = new Map<string, { ticket: Ticket; claimedAtMs: number }>();

  // ── baselines ──
  private readonly inFlight = new Map<string, number>();
  private readonly staticBinding = new Map<string, string>();
  private readonly rrNext = new Map<string, number>();
  private readonly rng: Rng;

  constructor(private readonly o: SimOptions) {
    this.sc = o.scenario;
    this.record = o.record ?? false;
    this.measure = o.measure ?? true;
    this.probeMs = o.probeIntervalMs ?? DEFAULT_PROBE_MS;
    this.overlayTtlMs = o.overlayTtlMs ?? OVERLAY_TTL_MS;
    this.waitLimitMs = (o.waitLimitS ?? GPU_WAIT_LIMIT_S) * 1000;
    this.rng = new Rng(o.seed).fork(`${this.sc.name}/policy/${o.policy}`);
    this.models = new Map(this.sc.models.map((m) => [m.name, m]));
    this.declared =
      (o.declareVram ?? true) ? new Map(this.sc.models.map((m) => [m.name, m.footprintMiB])) : undefined;
    const catalog = this.sc.models.map((m) =>
      modelWithFootprint(m.name, m.footprintMiB, this.sc.contextLength, this.sc.numParallel),
    );
    for (const g of this.sc.gpus) {
      const gpu = new SimOllama(
        this.loop,
        {
          name: g.name,
          vramMiB: g.vramMiB,
          numParallel: this.sc.numParallel,
          contextLength: this.sc.contextLength,
          models: catalog,
          // One prompt token per ms: a call of d ms is d tokens of prompt evaluation.
          promptTokensPerS: 1000,
          maxLoadedModels: o.maxLoadedModels ?? 3,
        },
        {
          onLoadStart: (gp, model, mib) => this.onLoadStart(gp, model, mib),
          onUnload: (gp, model, cause, mib) => this.onUnload(gp, model, cause, mib),
          onChange: (gp) => this.onGpuChange(gp),
        },
        EPOCH_MS,
      );
      this.gpus.push(gpu);
      this.gpuByName.set(g.name, gpu);
      this.inFlight.set(g.name, 0);
    }
    this.loop.onAfterEach(() => this.settle());
  }

  run(): SimResult {
    const work = generateWorkload(this.sc, this.o.seed);
    this.outstanding = work.length;
    for (const d of work) {
      for (const t of d.turns) {
        const pm = this.models.get(t.agent.candidates[0]!.model);
        for (const c of t.calls) this.idealMs.push((pm?.serviceMeanS ?? 0) * 1000 * c.workFactor);
      }
      this.loop.at(d.atMs, () => this.startDiscussion(d));
    }
    if (this.o.policy === "ours") {
      this.gpus.forEach((g, i) => {
        this.probe(g);
        if (this.probeMs > 0) {
          const phase = Math.round((this.probeMs * (i + 1)) / (this.gpus.length + 1));
          this.scheduleProbe(g, phase);
        }
      });
    }
    if (this.o.policy === "static") this.bindStatic();
    // Runs until every call has finished (a safety horizon guards against a run that never drains).
    const horizon = this.sc.arrivalWindowS * 1000 * 50;
    this.loop.run(horizon);
    return this.result();
  }

  // ── traffic ───────────────────────────────────────────────────────────────────────────────

  private startDiscussion(d: Discussion): void {
    this.outstanding += d.turns.length - 1;
    for (const turn of d.turns) {
      const ts: TurnState = {
        discussion: d,
        turn,
        agent: turn.agent,
        acceptable: inTolerance(turn.agent.candidates, this.sc.tolerance),
        next: 0,
        ended: false,
      };
      if (this.o.policy === "ours") {
        this.putIntents(ts);
        this.recordSelection(ts);
      }
      this.loop.at(this.loop.now + turn.startOffsetMs, () => this.nextCall(ts));
    }
  }

  private nextCall(ts: TurnState): void {
    const i = ts.next++;
    const planned = ts.turn.calls[i]!;
    const preferred = ts.agent.candidates[0]!.model;
    const pm = this.models.get(preferred);
    const id = `c${++this.callSeq}`;
    const rec: CallRecord = {
      id,
      discussion: ts.discussion.id,
      agent: ts.agent.id,
      preferred,
      model: "",
      provider: "",
      arrivalMs: this.loop.now,
      doneMs: Number.NaN,
      latencyMs: Number.NaN,
      idealMs: (pm?.serviceMeanS ?? 0) * 1000 * planned.workFactor,
      coldLoad: false,
      outcome: "dropped",
    };
    this.calls.push(rec);
    const call: CallState = { id, turn: ts, index: i, arrivalMs: this.loop.now, record: rec };
    if (this.o.policy === "ours") this.attempt(call, false);
    else this.dispatchBaseline(call);
  }

  /** After a call ended (done or failed): the agent thinks, then calls again, or its turn ends. */
  private afterCall(call: CallState): void {
    const ts = call.turn;
    if (ts.next < ts.turn.calls.length) {
      const think = ts.turn.calls[ts.next]!.thinkMs;
      this.loop.at(this.loop.now + think, () => this.nextCall(ts));
    } else {
      this.endTurn(ts);
    }
  }

  private endTurn(ts: TurnState): void {
    if (ts.ended) return;
    ts.ended = true;
    this.outstanding--;
    if (this.o.policy === "ours") this.clearIntents(ts);
  }

  private standAside(call: CallState, reason: RefusalReason): void {
    this.standAsides[reason]++;
    call.record.outcome = "stand-aside";
    call.record.standAside = reason;
    // The agent stands aside from the discussion: its remaining calls are never made.
    const ts = call.turn;
    for (let i = ts.next; i < ts.turn.calls.length; i++) {
      const pm = this.models.get(ts.agent.candidates[0]!.model);
      this.calls.push({
        id: `c${++this.callSeq}`,
        discussion: ts.discussion.id,
        agent: ts.agent.id,
        preferred: ts.agent.candidates[0]!.model,
        model: "",
        provider: "",
        arrivalMs: Number.NaN,
        doneMs: Number.NaN,
        latencyMs: Number.NaN,
        idealMs: (pm?.serviceMeanS ?? 0) * 1000 * ts.turn.calls[i]!.workFactor,
        coldLoad: false,
        outcome: "dropped",
      });
    }
    ts.next = ts.turn.calls.length;
    this.endTurn(ts);
  }

  private serviceMs(call: CallState, model: string): number {
    const m = this.models.get(model);
    return (m?.serviceMeanS ?? 0) * 1000 * call.turn.turn.calls[call.index]!.workFactor;
  }

  // ── baselines ─────────────────────────────────────────────────────────────────────────────

  /** Providers whose usable VRAM could ever hold the model, in scenario order. */
  private holders(model: string): SimOllama[] {
    const F = this.models.get(model)?.footprintMiB ?? Number.POSITIVE_INFINITY;
    return this.gpus.filter((g) => usableMiB(g.config.vramMiB) >= F);
  }

  /**
   * Reconcile-time binding: each agent, in order, gets its preferred model on the provider
   * with the most free VRAM that fits it, counting the models already bound there once each
   * (a provider already hosting the model fits it); round-robin among equally good ones.
   */
  private bindStatic(): void {
    const boundModels = new Map<string, Set<string>>(this.gpus.map((g) => [g.name, new Set()]));
    const free = new Map<string, number>(this.gpus.map((g) => [g.name, usableMiB(g.config.vramMiB)]));
    let rr = 0;
    for (const agent of this.sc.agents) {
      const model = agent.candidates[0]!.model;
      const F = this.models.get(model)?.footprintMiB ?? 0;
      const holders = this.holders(model);
      if (holders.length === 0) continue;
      const fits = (g: SimOllama) => boundModels.get(g.name)!.has(model) || free.get(g.name)! >= F;
      const pool = holders.some(fits) ? holders.filter(fits) : holders;
      const eff = (g: SimOllama) =>
        boundModels.get(g.name)!.has(model) ? free.get(g.name)! + F : free.get(g.name)!;
      const best = Math.max(...pool.map(eff));
      const ties = pool.filter((g) => eff(g) === best);
      const pick = ties[rr++ % ties.length]!;
      this.staticBinding.set(agent.id, pick.name);
      if (!boundModels.get(pick.name)!.has(model)) {
        boundModels.get(pick.name)!.add(model);
        free.set(pick.name, free.get(pick.name)! - F);
      }
    }
  }

  private pickBaseline(agent: ScenarioAgent, model: string): SimOllama | undefined {
    switch (this.o.policy) {
      case "static": {
        const name = this.staticBinding.get(agent.id);
        return name === undefined ? undefined : this.gpuByName.get(name);
      }
      case "round-robin": {
        const hs = this.holders(model);
        if (hs.length === 0) return undefined;
        const i = this.rrNext.get(model) ?? 0;
        this.rrNext.set(model, i + 1);
        return hs[i % hs.length];
      }
      case "least-busy": {
        let best: SimOllama | undefined;
        for (const g of this.holders(model)) {
          if (best === undefined || this.inFlight.get(g.name)! < this.inFlight.get(best.name)!) best = g;
        }
        return best;
      }
      case "random": {
        const hs = this.holders(model);
        return hs.length === 0 ? undefined : this.rng.pick(hs);
      }
      default:
        return undefined;
    }
  }

  private dispatchBaseline(call: CallState): void {
    const agent = call.turn.agent;
    const model = agent.candidates[0]!.model;
    const t0 = this.measure ? hrNow() : 0n;
    const gpu = this.pickBaseline(agent, model);
    if (this.measure) this.decisionUs.push(Number(hrNow() - t0) / 1000);
    if (gpu === undefined) {
      this.standAside(call, "model-too-large");
      return;
    }
    call.record.model = model;
    call.record.provider = gpu.name;
    this.inFlight.set(gpu.name, this.inFlight.get(gpu.name)! + 1);
    gpu.run(
      model,
      this.serviceMs(call, model),
      (r) => {
        this.inFlight.set(gpu.name, this.inFlight.get(gpu.name)! - 1);
        this.completed(call, r);
      },
      () => {
        this.inFlight.set(gpu.name, this.inFlight.get(gpu.name)! - 1);
        this.failed(call);
      },
    );
  }

  private completed(call: CallState, r: JobResult): void {
    const rec = call.record;
    rec.outcome = "done";
    rec.doneMs = this.loop.now;
    rec.latencyMs = this.loop.now - call.arrivalMs;
    rec.coldLoad = r.coldLoad;
    this.lastDoneMs = Math.max(this.lastDoneMs, this.loop.now);
    this.afterCall(call);
  }

  private failed(call: CallState): void {
    call.record.outcome = "failed";
    call.record.doneMs = this.loop.now;
    this.afterCall(call);
  }

  // ── ours ──────────────────────────────────────────────────────────────────────────────────

  private snapshot(): PlacementSnapshot {
    const now = this.loop.now;
    if (this.ticketsArr === undefined) this.ticketsArr = [...this.tickets.values()];
    const residencies: Residency[] = [];
    for (const [key, e] of this.overlays) {
      if (e.expiresAtMs <= now) {
        this.overlays.delete(key);
        continue;
      }
      residencies.push(e.residency);
    }
    return {
      providers: this.providersArr,
      tickets: this.ticketsArr,
      residencies,
      demand: this.aggregatedDemand(),
      ...(this.declared !== undefined ? { declaredVramMiB: this.declared } : {}),
      nowMs: EPOCH_MS + now,
    };
  }

  private aggregatedDemand(): Map<string, ModelDemand> {
    const now = this.loop.now;
    const c = this.demandCache;
    if (c !== undefined && c.rev === this.demandRev && c.at === now) return c.value;
    const entries: DemandEntry[] = [];
    for (const [key, e] of this.demand) {
      if (e.expiresAt <= EPOCH_MS + now) {
        this.demand.delete(key);
        continue;
      }
      entries.push(e);
    }
    const value = aggregateDemand(entries, EPOCH_MS + now);
    this.demandCache = { rev: this.demandRev, at: now, value };
    return value;
  }

  /** One placement attempt for a call (its first, or a retry while it waits). */
  private attempt(call: CallState, final: boolean): boolean {
    const ts = call.turn;
    const agent = ts.agent;
    const snap = this.snapshot();
    const health = this.health.get(agent.id);
    if (health !== undefined) snap.health = health;
    const req: PlanRequest = {
      candidates: agent.candidates,
      tolerance: this.sc.tolerance,
      promptTokens: ts.turn.calls[call.index]!.promptTokens,
    };
    const t0 = this.measure ? hrNow() : 0n;
    const ix = indexSnapshot(snap, this.o.planner);
    const bias = this.o.costBias?.(ix);
    if (bias !== undefined) req.costBias = bias;
    const d = plan(ix, req);
    if (this.measure) this.decisionUs.push(Number(hrNow() - t0) / 1000);
    const rec = this.record ? this.decisionRecord(call, ix, d) : undefined;

    if (d.kind === "claim") {
      const state = this.published.get(d.provider)!;
      const fits = claimFits(
        state,
        snap.tickets.filter((t) => t.provider === d.provider),
        snap.residencies,
        { modelName: d.model, modelFootprintMiB: d.footprintMiB, evicts: d.evicts },
        EPOCH_MS + this.loop.now,
      );
      if (rec !== undefined) rec.claimFits = fits;
      this.stopWaiting(call);
      this.claim(call, d.provider, d.model, d.footprintMiB, d.cold || d.loading, d.evicts);
      return true;
    }
    if (d.kind === "refuse") {
      this.stopWaiting(call);
      this.standAside(call, d.reason);
      return false;
    }
    // queue or wait-for-memory: gpu-busy now; wait for the next state change.
    if (call.waitingSince === undefined) {
      call.waitingSince = this.loop.now;
      call.waitModel = refusalOf(d)?.model ?? agent.candidates[0]!.model;
      this.putWait(call.waitModel, agent.id);
      this.waiters.push(call);
      call.deadline = this.loop.at(call.waitingSince + this.waitLimitMs, () => {
        if (call.waitingSince !== undefined) this.attempt(call, true);
      });
    } else if (final || this.loop.now >= call.waitingSince + this.waitLimitMs) {
      this.stopWaiting(call);
      this.standAside(call, "gpu-busy");
    }
    return false;
  }

  private stopWaiting(call: CallState): void {
    if (call.waitingSince === undefined) return;
    call.waitingSince = undefined;
    call.deadline?.cancel();
    const i = this.waiters.indexOf(call);
    if (i >= 0) this.waiters.splice(i, 1);
    if (call.waitModel !== undefined) this.clearWait(call.waitModel, call.turn.agent.id);
  }

  private claim(
    call: CallState,
    provider: string,
    model: string,
    footprintMiB: number,
    coldLoad: boolean,
    evicts: Record<string, number>,
  ): void {
    const now = this.loop.now;
    const ticket: Ticket = {
      ticketId: `t${++this.ticketSeq}`,
      provider,
      modelFootprintMiB: footprintMiB,
      kvCacheFootprintMiB: 0,
      holderId: call.turn.agent.id,
      claimedAt: iso(now),
      modelName: model,
      evicts,
      coldLoad,
    };
    this.tickets.set(ticket.ticketId, ticket);
    this.ticketsArr = undefined;
    this.ticketOf.set(call.id, { ticket, claimedAtMs: now });
    this.changed = true;
    const gpu = this.gpuByName.get(provider)!;
    // Claim first, then release: the victims go once the ticket holds the room.
    for (const victim of Object.keys(evicts)) {
      gpu.unload(victim);
      this.dropOverlay(provider, victim);
    }
    call.record.model = model;
    call.record.provider = provider;
    gpu.run(
      model,
      this.serviceMs(call, model),
      (r) => {
        this.release(call, true);
        this.completed(call, r);
      },
      () => {
        this.release(call, false);
        this.failed(call);
      },
    );
  }

  private release(call: CallState, success: boolean): void {
    const held = this.ticketOf.get(call.id);
    if (held === undefined) return;
    this.ticketOf.delete(call.id);
    const { ticket, claimedAtMs } = held;
    this.tickets.delete(ticket.ticketId);
    this.ticketsArr = undefined;
    this.changed = true;
    const now = this.loop.now;
    // Learn as the sidecar's Release does: circuit, success rate, latency EMA (per sidecar).
    const agent = call.turn.agent.id;
    let hm = this.health.get(agent);
    if (hm === undefined) {
      hm = new Map();
      this.health.set(agent, hm);
    }
    const h = hm.get(ticket.provider) ?? {};
    const successByModel = new Map(h.successByModel ?? []);
    successByModel.set(
      ticket.modelName,
      recordOutcome(successByModel.get(ticket.modelName) ?? NO_SUCCESS_SAMPLES, success),
    );
    const latencyEmaMs = success ? recordLatency(h.latencyEmaMs, now - claimedAtMs) : h.latencyEmaMs;
    const next: ProviderHealth = {
      circuit: success
        ? recordSuccess(h.circuit ?? CLOSED_CIRCUIT)
        : recordFailure(h.circuit ?? CLOSED_CIRCUIT, EPOCH_MS + now),
      successByModel,
    };
    if (latencyEmaMs !== undefined) next.latencyEmaMs = latencyEmaMs;
    hm.set(ticket.provider, next);
    if (success) {
      this.writeOverlay(ticket.provider, ticket.modelName, ticket.modelFootprintMiB);
      this.recordUse(ticket.modelName, agent);
    }
  }

  private writeOverlay(provider: string, model: string, footprintMiB: number): void {
    const now = this.loop.now;
    this.overlays.set(`${provider}\u0000${model}`, {
      // writtenAt as the sidecar writes it: core stops counting the overlay once a later probe
      // does not list the model.
      residency: { provider, modelName: model, modelFootprintMiB: footprintMiB, writtenAt: now },
      writtenAtMs: now,
      expiresAtMs: now + this.overlayTtlMs,
    });
    this.changed = true;
  }

  private dropOverlay(provider: string, model: string): void {
    if (this.overlays.delete(`${provider}\u0000${model}`)) this.changed = true;
  }

  // demand entries, as the state layer writes them
  private putDemand(key: string, e: DemandEntry): void {
    this.demand.set(key, e);
    this.demandRev++;
  }

  private deleteDemand(key: string): void {
    if (this.demand.delete(key)) this.demandRev++;
  }

  private putWait(model: string, agent: string): void {
    const expiresAt = EPOCH_MS + this.loop.now + WAIT_ENTRY_TTL_MS;
    this.putDemand(`wait\u0000${model}\u0000${agent}`, { kind: "wait", model, agent, expiresAt });
  }

  private clearWait(model: string, agent: string): void {
    this.deleteDemand(`wait\u0000${model}\u0000${agent}`);
  }

  private putIntents(ts: TurnState): void {
    const expiresAt = EPOCH_MS + this.loop.now + INTENT_TTL_MS;
    for (const c of ts.acceptable) {
      this.putDemand(`intent\u0000${c.model}\u0000${ts.agent.id}`, {
        kind: "intent",
        model: c.model,
        agent: ts.agent.id,
        thread: ts.discussion.id,
        expiresAt,
      });
    }
  }

  private clearIntents(ts: TurnState): void {
    for (const c of ts.acceptable) {
      const key = `intent\u0000${c.model}\u0000${ts.agent.id}`;
      const e = this.demand.get(key);
      if (e?.kind === "intent" && e.thread === ts.discussion.id) this.deleteDemand(key);
    }
  }

  private recordUse(model: string, agent: string): void {
    const now = EPOCH_MS + this.loop.now;
    const key = `use\u0000${model}`;
    const prev = this.demand.get(key);
    const old = prev?.kind === "use" && prev.expiresAt > now ? prev : undefined;
    this.putDemand(key, {
      kind: "use",
      model,
      agent,
      rate: bumpRate(old?.rate ?? 0, old?.updatedAt ?? now, now),
      updatedAt: now,
      lastUsedAt: now,
      expiresAt: now + RATE_ENTRY_TTL_MS,
    });
  }

  private recordSelection(ts: TurnState): void {
    const now = EPOCH_MS + this.loop.now;
    const key = `sel\u0000${ts.agent.crew}\u0000${ts.agent.id}`;
    const prev = this.demand.get(key);
    const old = prev?.kind === "sel" && prev.expiresAt > now ? prev : undefined;
    this.putDemand(key, {
      kind: "sel",
      rate: bumpRate(old?.rate ?? 0, old?.updatedAt ?? now, now),
      updatedAt: now,
      expiresAt: now + RATE_ENTRY_TTL_MS,
      models: ts.acceptable.map((c) => c.model),
    });
  }

  // ── the publisher ─────────────────────────────────────────────────────────────────────────

  private scheduleProbe(g: SimOllama, at: number): void {
    this.loop.at(at, () => {
      this.probe(g);
      // Only while traffic remains: the run ends when the loop runs dry.
      if (this.outstanding > 0) this.scheduleProbe(g, this.loop.now + this.probeMs);
    });
  }

  /** Probes one GPU's /api/ps and publishes its provider state (as the operator would). */
  private probe(g: SimOllama): void {
    const loadedModels: string[] = [];
    const footprints: Record<string, number> = {};
    const contexts: Record<string, number> = {};
    for (const r of g.ps()) {
      loadedModels.push(r.model);
      footprints[r.model] = r.footprintMiB;
      contexts[r.model] = r.numCtx;
    }
    const available: Record<string, number> = {};
    for (const [name, spec] of g.catalog) {
      if (!(name in footprints)) available[name] = Math.ceil(spec.onDiskMiB);
    }
    const state: ProviderState = {
      name: g.name,
      endpoint: `http://${g.name}:11434`,
      maxParallel: g.config.numParallel,
      activeCount: 0,
      queueDepth: 0,
      loadedModels,
      ready: true,
      lastProbedAt: iso(this.loop.now),
      totalVramMiB: g.config.vramMiB,
      loadedModelFootprintsMiB: footprints,
      availableModelFootprintsMiB: available,
      contextLength: g.config.contextLength,
      loadedModelContextLengths: contexts,
    };
    if (this.o.publishMaxLoadedModels) Object.assign(state, { maxLoadedModels: g.config.maxLoadedModels });
    this.published.set(g.name, state);
    this.providersArr = this.gpus.map((x) => this.published.get(x.name)).filter((s) => s !== undefined);
    if (this.o.overlaySupersededByProbe) {
      for (const [key, e] of this.overlays) {
        if (
          e.residency.provider === g.name &&
          e.writtenAtMs < this.loop.now &&
          !(e.residency.modelName in footprints)
        )
          this.overlays.delete(key);
      }
    }
    const sig = JSON.stringify([loadedModels, footprints]);
    if (this.publishedSig.get(g.name) !== sig) {
      this.publishedSig.set(g.name, sig);
      this.changed = true;
    }
  }

  // ── GPU observations ──────────────────────────────────────────────────────────────────────

  private onLoadStart(g: SimOllama, model: string, mib: number): void {
    this.loadsN++;
    this.loadedMiB += mib;
    if (this.record) this.loadRecs.push({ atMs: this.loop.now, provider: g.name, model, footprintMiB: mib });
  }

  private onUnload(g: SimOllama, model: string, cause: UnloadCause, mib: number): void {
    if (cause === "planned") this.evictPlanned++;
    else if (cause === "evicted") this.evictOllama++;
    else this.expiries++;
    if (this.record) {
      let live = 0;
      for (const t of this.tickets.values()) if (t.provider === g.name && t.modelName === model) live++;
      this.unloads.push({
        atMs: this.loop.now,
        provider: g.name,
        model,
        cause,
        footprintMiB: mib,
        liveTickets: live,
      });
    }
  }

  private onGpuChange(g: SimOllama): void {
    if (this.o.policy === "ours" && this.probeMs === 0) this.probe(g);
  }

  /** After every event: waiting agents retry when the shared state changed. */
  private settle(): void {
    if (!this.changed) return;
    this.changed = false;
    if (this.waiters.length === 0) return;
    for (let pass = 0; pass < 64; pass++) {
      let claimed = false;
      for (const call of [...this.waiters]) {
        if (call.waitingSince === undefined) continue;
        if (this.attempt(call, false)) claimed = true;
      }
      if (!claimed || this.waiters.length === 0) break;
    }
    this.changed = false;
  }

  // ── records ───────────────────────────────────────────────────────────────────────────────

  private decisionRecord(call: CallState, ix: SnapshotIndex, d: Decision): DecisionRecord {
    const agent = call.turn.agent;
    const acceptable = call.turn.acceptable.map((c) => c.model);
    const warmFreeSlot: CopyInfo[] = [];
    for (const m of acceptable) {
      for (const v of ix.warmAt.get(m) ?? []) {
        if (v.ineligible !== undefined) continue;
        const n = v.byModel.get(m)?.count ?? 0;
        if (n < v.slots) warmFreeSlot.push({ provider: v.name, model: m, tickets: n, slots: v.slots });
      }
    }
    const copyModel = d.kind === "claim" ? d.model : acceptable[0]!;
    const copies: CopyInfo[] = [];
    for (const v of ix.warmAt.get(copyModel) ?? []) {
      if (v.ineligible !== undefined) continue;
      copies.push({
        provider: v.name,
        model: copyModel,
        tickets: v.byModel.get(copyModel)?.count ?? 0,
        slots: v.slots,
      });
    }
    const rec: DecisionRecord = {
      atMs: this.loop.now,
      callId: call.id,
      agent: agent.id,
      preferred: acceptable[0]!,
      acceptable,
      kind: d.kind,
      evicts: {},
      victimTickets: {},
      warmFreeSlot,
      copies,
    };
    if (d.kind === "claim") {
      const v = ix.byName.get(d.provider)!;
      rec.step = d.step;
      rec.provider = d.provider;
      rec.model = d.model;
      rec.cold = d.cold;
      rec.loading = d.loading;
      rec.evicts = { ...d.evicts };
      for (const victim of Object.keys(d.evicts))
        rec.victimTickets[victim] = v.byModel.get(victim)?.count ?? 0;
      rec.target = {
        usable: v.usable,
        free: v.free,
        committed: v.residentSum + v.loadingSum - v.credit,
        footprint: d.footprintMiB,
        active: v.active,
      };
    }
    this.decisions.push(rec);
    return rec;
  }

  private result(): SimResult {
    const done = this.calls.filter((c) => c.outcome === "done");
    // A call that arrived but never finished (still queued when the horizon stopped the run).
    const unfinished = this.calls.filter(
      (c) => c.outcome === "dropped" && Number.isFinite(c.arrivalMs),
    ).length;
    const lat = done.map((c) => c.latencyMs / 1000).sort((a, b) => a - b);
    const ideal = this.idealMs.map((x) => x / 1000).sort((a, b) => a - b);
    const us = [...this.decisionUs].sort((a, b) => a - b);
    // Busy time is counted up to the last completion (idle keep_alive tails do not dilute it).
    const end = this.lastDoneMs;
    let busy = 0;
    for (const g of this.gpus) busy += g.busyMs();
    const metrics: SimMetrics = {
      scenario: this.sc.name,
      policy: this.o.policy,
      seed: this.o.seed,
      latency_mean_s: round(mean(lat)),
      latency_p95_s: round(percentileSorted(lat, 95)),
      latency_p99_s: round(percentileSorted(lat, 99)),
      gib_loaded: round(this.loadedMiB / 1024),
      loads: this.loadsN,
      evictions: this.evictPlanned + this.evictOllama,
      stand_asides: { ...this.standAsides },
      gpu_busy_fraction: round(end > 0 ? busy / (end * this.gpus.length) : 0, 4),
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
    const out: SimResult = { metrics, latencies: lat, ideal, events: this.loop.processed };
    if (this.record) {
      out.calls = this.calls;
      out.decisions = this.decisions;
      out.unloads = this.unloads;
      out.loads = this.loadRecs;
    }
    return out;
  }
}
