// Ours: the sidecar's loop over the very same src/core decisions. Each call builds a
// PlacementSnapshot from the simulated shared state (./shared-state.ts), plans, and follows
// core's call policy: a claim starts the call at the chosen GPU (planned victims are unloaded
// first); a waitable refusal makes the agent wait and retry on the next state change (a ticket
// claimed or released, an overlay written, a probe that saw something new), up to the wait
// limit, then stand aside; anything else stands aside at once.
//
// Not modelled: planning at selection (Commit's held plans and pre-loads), the triage phase
// and cannot-wait static fallbacks, engine failures, prompts longer than a context (every
// scenario's prompts fit), and compute shared between two runners on one card (as in the
// emulator, each loaded model serves its own slots at full speed).
import {
  afterRefusal,
  claimFits,
  type Decision,
  GPU_WAIT_LIMIT_S,
  indexSnapshot,
  type PlannerOptions,
  type PlanRequest,
  type ProviderState,
  plan,
  refusalOf,
  type SnapshotIndex,
} from "../../core/index.js";
import type { JobResult } from "../../emulator/index.js";
import { SimFixedEngine } from "../fixed-engine.js";
import type { SimOllama } from "../ollama.js";
import { type CallState, type CopyInfo, type DecisionRecord, EPOCH_MS, type TurnState } from "../types.js";
import type { SimPolicy, World } from "../world.js";
import { SharedStateModel } from "./shared-state.js";

/** Lifetime of a residency overlay after its last write (ms): the tickets bucket's TTL. */
const OVERLAY_TTL_MS = 10 * 60_000;
/** How often the publisher probes each GPU (ms). */
const DEFAULT_PROBE_MS = 10_000;

interface Waiting {
  since: number;
  model: string;
  deadline: { cancel(): void };
}

export class OursPolicy implements SimPolicy {
  private readonly state: SharedStateModel;
  private readonly probeMs: number;
  private readonly waitLimitMs: number;
  private readonly waiting = new Map<CallState, Waiting>();
  private readonly held = new Map<string, { ticketId: string; claimedAtMs: number }>();
  private readonly plannerOptions: Partial<PlannerOptions>;

  constructor(private readonly w: World) {
    const o = w.o;
    this.probeMs = o.probeIntervalMs ?? DEFAULT_PROBE_MS;
    this.waitLimitMs = (o.waitLimitS ?? GPU_WAIT_LIMIT_S) * 1000;
    const declared =
      (o.declareVram ?? true) ? new Map(w.sc.models.map((m) => [m.name, m.footprintMiB])) : undefined;
    this.state = new SharedStateModel(() => w.loop.now, o.overlayTtlMs ?? OVERLAY_TTL_MS, declared);
    this.plannerOptions = { policy: o.policy === "kubemoot" ? "kubemoot" : "time", ...o.planner };
  }

  start(): void {
    const all = this.w.providers;
    all.forEach((g, i) => {
      this.probe(g);
      if (this.probeMs > 0) {
        const phase = Math.round((this.probeMs * (i + 1)) / (all.length + 1));
        this.scheduleProbe(g, phase);
      }
    });
  }

  turnStarted(ts: TurnState): void {
    this.state.putIntents(ts);
    this.state.recordSelection(ts);
  }

  turnEnded(ts: TurnState): void {
    this.state.clearIntents(ts);
  }

  dispatch(call: CallState): void {
    this.attempt(call, false);
  }

  gpuChanged(g: SimOllama): void {
    if (this.probeMs === 0) this.probe(g);
  }

  liveTickets(provider: string, model: string): number {
    return this.state.liveTickets(provider, model);
  }

  /** After every event: waiting agents retry when the shared state changed. */
  afterEvent(): void {
    if (!this.state.takeChanged()) return;
    if (this.waiting.size === 0) return;
    for (let pass = 0; pass < 64; pass++) {
      let claimed = false;
      for (const call of [...this.waiting.keys()]) {
        if (!this.waiting.has(call)) continue;
        if (this.attempt(call, false)) claimed = true;
      }
      if (!claimed || this.waiting.size === 0) break;
    }
    this.state.takeChanged();
  }

  /** One placement attempt for a call (its first, or a retry while it waits). */
  private attempt(call: CallState, final: boolean): boolean {
    const agent = call.turn.agent;
    const snap = this.state.snapshot();
    const health = this.state.healthOf(agent.id);
    if (health !== undefined) snap.health = health;
    const req: PlanRequest = {
      candidates: agent.candidates,
      tolerance: this.w.sc.tolerance,
      promptTokens: call.turn.turn.calls[call.index]!.promptTokens,
    };
    const { ix, d } = this.w.recorder.timed(() => {
      const ix = indexSnapshot(snap, this.plannerOptions);
      const bias = this.w.o.costBias?.(ix);
      if (bias !== undefined) req.costBias = bias;
      return { ix, d: plan(ix, req) };
    });
    const rec = this.w.recorder.detailed ? this.decisionRecord(call, ix, d) : undefined;

    if (d.kind === "claim") {
      const fits = claimFits(
        this.state.provider(d.provider)!,
        snap.tickets.filter((t) => t.provider === d.provider),
        snap.residencies,
        { modelName: d.model, modelFootprintMiB: d.footprintMiB, evicts: d.evicts },
        EPOCH_MS + this.w.loop.now,
      );
      if (rec !== undefined) rec.claimFits = fits;
      this.stopWaiting(call);
      this.claim(call, d.provider, d.model, d.footprintMiB, d.cold || d.loading, d.evicts);
      return true;
    }
    const refusal = refusalOf(d)!;
    const next = afterRefusal(refusal, {
      phase: "mulling",
      cannotWait: false,
      hasStaticBinding: false,
      waitLimitS: this.waitLimitMs / 1000,
    });
    if (next !== "wait") {
      this.stopWaiting(call);
      this.w.standAside(call, refusal.reason);
      return false;
    }
    const waiting = this.waiting.get(call);
    if (waiting === undefined) {
      const since = this.w.loop.now;
      const model = refusal.model || agent.candidates[0]!.model;
      this.state.putWait(model, agent.id);
      const deadline = this.w.loop.at(since + this.waitLimitMs, () => {
        if (this.waiting.has(call)) this.attempt(call, true);
      });
      this.waiting.set(call, { since, model, deadline });
    } else if (final || this.w.loop.now >= waiting.since + this.waitLimitMs) {
      this.stopWaiting(call);
      this.w.standAside(call, "gpu-busy");
    }
    return false;
  }

  private stopWaiting(call: CallState): void {
    const waiting = this.waiting.get(call);
    if (waiting === undefined) return;
    this.waiting.delete(call);
    waiting.deadline.cancel();
    this.state.clearWait(waiting.model, call.turn.agent.id);
  }

  private claim(
    call: CallState,
    provider: string,
    model: string,
    footprintMiB: number,
    coldLoad: boolean,
    evicts: Record<string, number>,
  ): void {
    const ticket = this.state.addTicket(call.turn.agent.id, provider, model, footprintMiB, coldLoad, evicts);
    this.held.set(call.id, { ticketId: ticket.ticketId, claimedAtMs: this.w.loop.now });
    const gpu = this.w.provider(provider)!;
    // Claim first, then release: the victims go once the ticket holds the room.
    for (const victim of Object.keys(evicts)) {
      if (gpu instanceof SimFixedEngine)
        throw new Error(`sim: an unload planned on ${provider}, a fixed-model engine`);
      gpu.unload(victim);
      this.state.dropOverlay(provider, victim);
    }
    this.w.runCall(call, gpu, model, (ok, r) => this.release(call, provider, model, footprintMiB, ok, r));
  }

  private release(
    call: CallState,
    provider: string,
    model: string,
    footprintMiB: number,
    ok: boolean,
    r: JobResult | undefined,
  ): void {
    const held = this.held.get(call.id);
    if (held === undefined) return;
    this.held.delete(call.id);
    this.state.removeTicket(held.ticketId);
    const agent = call.turn.agent.id;
    // As the proxy reports it: the whole call, and the engine's load time within it.
    const latencyMs = this.w.loop.now - held.claimedAtMs;
    const loadMs = r?.loadMs ?? 0;
    this.state.learn(agent, provider, {
      model,
      outcome: ok ? "succeeded" : "failed",
      latencyMs,
      loadMs,
      footprintMiB,
      coldLoad: r?.coldLoad ?? false,
    });
    if (ok) {
      // The sidecar writes an overlay after a call that loaded; a fixed engine loads nothing.
      if (!this.w.engineByName.has(provider)) this.state.writeOverlay(provider, model, footprintMiB);
      this.state.recordUse(model, agent, Math.max(0, latencyMs - loadMs));
    }
  }

  // ── the publisher ─────────────────────────────────────────────────────────────────────────

  private scheduleProbe(g: SimOllama | SimFixedEngine, at: number): void {
    this.w.loop.at(at, () => {
      this.probe(g);
      // Only while traffic remains: the run ends when the loop runs dry.
      if (this.w.busy) this.scheduleProbe(g, this.w.loop.now + this.probeMs);
    });
  }

  /**
   * Probes a fixed-model engine's metrics and publishes its provider state as the contract reads
   * (docs/rules/engines.md): what it serves, its slots, running and waiting requests, KV usage.
   */
  private probeEngine(e: SimFixedEngine): void {
    const contexts: Record<string, number> = {};
    for (const m of e.config.serves) contexts[m] = e.config.contextLength;
    const state: ProviderState = {
      name: e.name,
      endpoint: `http://${e.name}:8000`,
      engine: e.config.engine,
      maxParallel: e.config.slots,
      activeCount: e.active,
      queueDepth: e.queued,
      loadedModels: [...e.config.serves],
      ready: true,
      lastProbedAt: new Date(EPOCH_MS + this.w.loop.now).toISOString(),
      totalVramMiB: e.config.vramMiB,
      loadedModelFootprintsMiB: {},
      availableModelFootprintsMiB: {},
      contextLength: e.config.contextLength,
      loadedModelContextLengths: contexts,
      kvCacheUsage: e.kvUsage,
    };
    this.state.publish(state, this.providerOrder(), false);
  }

  private providerOrder(): string[] {
    return this.w.providers.map((x) => x.name);
  }

  /** Probes one GPU's /api/ps and publishes its provider state (as the operator would). */
  private probe(g: SimOllama | SimFixedEngine): void {
    if (g instanceof SimFixedEngine) {
      this.probeEngine(g);
      return;
    }
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
      lastProbedAt: new Date(EPOCH_MS + this.w.loop.now).toISOString(),
      totalVramMiB: g.config.vramMiB,
      loadedModelFootprintsMiB: footprints,
      availableModelFootprintsMiB: available,
      contextLength: g.config.contextLength,
      loadedModelContextLengths: contexts,
    };
    if (this.w.o.publishMaxLoadedModels ?? true) state.maxLoadedModels = g.config.maxLoadedModels;
    this.state.publish(state, this.providerOrder(), this.w.o.overlaySupersededByProbe ?? false);
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
      atMs: this.w.loop.now,
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
    this.w.recorder.decisions.push(rec);
    return rec;
  }
}
