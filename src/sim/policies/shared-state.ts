// The shared state as our sidecars would see it in the simulation: provider states as the
// publisher last probed them, tickets of the calls in flight, residency overlays, demand
// entries (wait, intent, use, sel) and each agent's own health. It keeps them the way the
// state layer writes them, and builds the core's PlacementSnapshot from them.
import {
  aggregateDemand,
  bumpRate,
  type CallResult,
  type DemandEntry,
  INTENT_TTL_MS,
  learnFromCall,
  type ModelDemand,
  type PlacementSnapshot,
  type ProviderHealth,
  type ProviderState,
  RATE_ENTRY_TTL_MS,
  type Residency,
  recordLatency,
  type Ticket,
  WAIT_ENTRY_TTL_MS,
} from "../../core/index.js";
import { EPOCH_MS, type TurnState } from "../types.js";

interface OverlayEntry {
  residency: Residency;
  writtenAtMs: number;
  expiresAtMs: number;
}

function iso(ms: number): string {
  return new Date(EPOCH_MS + ms).toISOString();
}

export class SharedStateModel {
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
  /** Per agent (each sidecar learns on its own), per provider. */
  private readonly health = new Map<string, Map<string, ProviderHealth>>();
  /** Whether anything a waiter would see changed since the last `takeChanged`. */
  private changed = false;

  constructor(
    private readonly now: () => number,
    /** Lifetime of a residency overlay after its last write (ms). */
    private readonly overlayTtlMs: number,
    private readonly declared: ReadonlyMap<string, number> | undefined,
  ) {}

  /** Whether the state changed since the last call, and resets the flag. */
  takeChanged(): boolean {
    const c = this.changed;
    this.changed = false;
    return c;
  }

  provider(name: string): ProviderState | undefined {
    return this.published.get(name);
  }

  healthOf(agent: string): Map<string, ProviderHealth> | undefined {
    return this.health.get(agent);
  }

  snapshot(): PlacementSnapshot {
    const now = this.now();
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

  /** Publishes a probed provider state; `order` lists every provider in scenario order. */
  publish(state: ProviderState, order: readonly string[], supersedeOverlays: boolean): void {
    const now = this.now();
    this.published.set(state.name, state);
    this.providersArr = order.map((n) => this.published.get(n)).filter((s) => s !== undefined);
    const footprints = state.loadedModelFootprintsMiB ?? {};
    if (supersedeOverlays) {
      for (const [key, e] of this.overlays) {
        if (
          e.residency.provider === state.name &&
          e.writtenAtMs < now &&
          !(e.residency.modelName in footprints)
        )
          this.overlays.delete(key);
      }
    }
    const sig = JSON.stringify([state.loadedModels, footprints]);
    if (this.publishedSig.get(state.name) !== sig) {
      this.publishedSig.set(state.name, sig);
      this.changed = true;
    }
  }

  addTicket(
    holder: string,
    provider: string,
    model: string,
    footprintMiB: number,
    coldLoad: boolean,
    evicts: Record<string, number>,
  ): Ticket {
    const ticket: Ticket = {
      ticketId: `t${++this.ticketSeq}`,
      provider,
      modelFootprintMiB: footprintMiB,
      kvCacheFootprintMiB: 0,
      holderId: holder,
      claimedAt: iso(this.now()),
      modelName: model,
      evicts,
      coldLoad,
    };
    this.tickets.set(ticket.ticketId, ticket);
    this.ticketsArr = undefined;
    this.changed = true;
    return ticket;
  }

  removeTicket(ticketId: string): void {
    this.tickets.delete(ticketId);
    this.ticketsArr = undefined;
    this.changed = true;
  }

  liveTickets(provider: string, model: string): number {
    let live = 0;
    for (const t of this.tickets.values()) if (t.provider === provider && t.modelName === model) live++;
    return live;
  }

  /** What a call that ran teaches its agent's sidecar (core's call policy). */
  learn(agent: string, provider: string, call: CallResult): void {
    let hm = this.health.get(agent);
    if (hm === undefined) {
      hm = new Map();
      this.health.set(agent, hm);
    }
    hm.set(provider, learnFromCall(hm.get(provider), call, EPOCH_MS + this.now()));
  }

  writeOverlay(provider: string, model: string, footprintMiB: number): void {
    const now = this.now();
    this.overlays.set(`${provider}\u0000${model}`, {
      // writtenAt as the sidecar writes it: core stops counting the overlay once a later probe
      // does not list the model.
      residency: { provider, modelName: model, modelFootprintMiB: footprintMiB, writtenAt: EPOCH_MS + now },
      writtenAtMs: now,
      expiresAtMs: now + this.overlayTtlMs,
    });
    this.changed = true;
  }

  dropOverlay(provider: string, model: string): void {
    if (this.overlays.delete(`${provider}\u0000${model}`)) this.changed = true;
  }

  putWait(model: string, agent: string): void {
    const expiresAt = EPOCH_MS + this.now() + WAIT_ENTRY_TTL_MS;
    this.putDemand(`wait\u0000${model}\u0000${agent}`, { kind: "wait", model, agent, expiresAt });
  }

  clearWait(model: string, agent: string): void {
    this.deleteDemand(`wait\u0000${model}\u0000${agent}`);
  }

  putIntents(ts: TurnState): void {
    const expiresAt = EPOCH_MS + this.now() + INTENT_TTL_MS;
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

  clearIntents(ts: TurnState): void {
    for (const c of ts.acceptable) {
      const key = `intent\u0000${c.model}\u0000${ts.agent.id}`;
      const e = this.demand.get(key);
      if (e?.kind === "intent" && e.thread === ts.discussion.id) this.deleteDemand(key);
    }
  }

  recordUse(model: string, agent: string, serviceMs: number): void {
    const now = EPOCH_MS + this.now();
    const key = `use\u0000${model}`;
    const prev = this.demand.get(key);
    const old = prev?.kind === "use" && prev.expiresAt > now ? prev : undefined;
    const service = serviceMs > 0 ? recordLatency(old?.serviceMs, serviceMs) : old?.serviceMs;
    this.putDemand(key, {
      kind: "use",
      model,
      agent,
      rate: bumpRate(old?.rate ?? 0, old?.updatedAt ?? now, now),
      updatedAt: now,
      lastUsedAt: now,
      expiresAt: now + RATE_ENTRY_TTL_MS,
      ...(service !== undefined ? { serviceMs: service } : {}),
    });
  }

  recordSelection(ts: TurnState): void {
    const now = EPOCH_MS + this.now();
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

  private aggregatedDemand(): Map<string, ModelDemand> {
    const now = this.now();
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

  private putDemand(key: string, e: DemandEntry): void {
    this.demand.set(key, e);
    this.demandRev++;
  }

  private deleteDemand(key: string): void {
    if (this.demand.delete(key)) this.demandRev++;
  }
}
