// The shared state of a simulated cluster (docs/rules/state.md §1–§5, in virtual time): provider
// states as the publisher last probed them, tickets of the calls in flight, residency overlays,
// demand entries (wait, intent, use, sel) and the capacity watch's change counter. Each agent's
// scheduler reads and writes it through its own SchedulerStore (`storeFor`), the way every
// sidecar opens the same buckets: claims are decided by the state layer's own pure claim
// decision, one at a time, so no interleaving of agents can spend the same room twice.
import {
  type Band,
  bumpRate,
  type ConversationIndex,
  type ConversationSeen,
  claimVerdict,
  type DemandEntry,
  INTENT_TTL_MS,
  type IntentEntry,
  indexConversations,
  type ProviderState,
  RATE_ENTRY_TTL_MS,
  type Residency,
  recordLatency,
  type SelEntry,
  type ServiceEntry,
  type Ticket,
  type UseEntry,
  WAIT_ENTRY_TTL_MS,
  type WaitEntry,
} from "../../core/index.js";
import type { SchedulerStore } from "../../scheduler/index.js";
import {
  type ChangeResult,
  type ClaimRequest,
  type ClaimResult,
  type DemandSnapshot,
  demandSnapshotOf,
  LEASE_GRACE_MS,
  type TicketRef,
} from "../../state/index.js";
import type { EventLoop } from "../events.js";
import { EPOCH_MS } from "../types.js";

interface Waiter {
  since: number;
  settle: (r: ChangeResult) => void;
}

const NO_STATS = { attempts: 1, conflicts: 0, revision: 0, viewAgeMs: 0, confirmedAt: 0 };

export class SharedStateModel {
  private readonly published = new Map<string, ProviderState>();
  private readonly publishedSig = new Map<string, string>();
  private providersArr: ProviderState[] = [];
  private readonly tickets = new Map<string, Ticket>();
  private ticketsArr: Ticket[] | undefined;
  private ticketSeq = 0;
  private readonly overlays = new Map<string, { residency: Residency; expiresAtMs: number }>();
  private readonly demand = new Map<string, DemandEntry>();
  private demandRev = 0;
  private demandCache: { rev: number; at: number; value: DemandSnapshot } | undefined;
  private readonly suspects = new Map<string, number>();
  /** Conversation records by provider and key (docs/rules/state.md §2.4). */
  private readonly conversations = new Map<string, ConversationSeen>();
  /** Whether anything a waiter would see changed since the last `deliverChanges`. */
  private changed = false;
  private counter = 0;
  private readonly waiters = new Set<Waiter>();

  constructor(
    private readonly loop: EventLoop,
    /** Lifetime of a residency overlay after its last write (ms). */
    private readonly overlayTtlMs: number,
  ) {}

  /** The store's clock (epoch ms): the virtual clock from the simulation's epoch. */
  now(): number {
    return EPOCH_MS + this.loop.now;
  }

  /**
   * What the watches deliver: when the state changed since the last call, the change counter
   * moves and every waiter wakes. Returns whether it did.
   */
  deliverChanges(): boolean {
    if (!this.changed) return false;
    this.changed = false;
    this.counter++;
    for (const w of [...this.waiters]) {
      if (this.counter > w.since) w.settle({ kind: "changed", counter: this.counter });
    }
    return true;
  }

  /** Publishes a probed provider state; `order` lists every provider in scenario order. */
  publish(state: ProviderState, order: readonly string[], supersedeOverlays: boolean): void {
    const now = this.now();
    this.published.set(state.name, state);
    this.providersArr = order.map((n) => this.published.get(n)).filter((s) => s !== undefined);
    const footprints = state.loadedModelFootprintsMiB ?? {};
    if (supersedeOverlays) {
      for (const [key, e] of this.overlays) {
        const r = e.residency;
        if (r.provider === state.name && (r.writtenAt ?? 0) < now && !(r.modelName in footprints))
          this.overlays.delete(key);
      }
    }
    const sig = JSON.stringify([state.loadedModels, footprints]);
    if (this.publishedSig.get(state.name) !== sig) {
      this.publishedSig.set(state.name, sig);
      this.changed = true;
    }
  }

  liveTickets(provider: string, model: string): number {
    let live = 0;
    for (const t of this.tickets.values()) if (t.provider === provider && t.modelName === model) live++;
    return live;
  }

  /** The shared state as the agent `holder`'s sidecar opens it. */
  storeFor(holder: string): SchedulerStore {
    const shared = this;
    return {
      providers: {
        list: async () => this.providersArr,
        peek: (name) => this.published.get(name),
      },
      tickets: {
        everything: async () => this.everything(),
        claim: async (req) => this.claim(holder, req),
        release: async (ref) => this.release(ref),
        renew: async (ref, leaseMs) => this.renew(ref, leaseMs ?? 0),
        writeResidency: async (r) => this.writeResidency(r),
        clearResidency: async (provider, model) => this.clearResidency(provider, model),
        markSuspect: async (provider, sinceMs) => {
          this.suspects.set(provider, Math.max(this.suspects.get(provider) ?? 0, sinceMs));
        },
        // Conversation records take and free nothing: no change is signalled, as the watch ignores them.
        writeConversation: async (c) => {
          this.conversations.set(`${c.provider}\u0000${c.key}`, c);
        },
        deleteConversation: async (provider, _agent, key) => {
          this.conversations.delete(`${provider}\u0000${key}`);
        },
        allTickets: async () => this.allTickets(),
        find: async (id: string) => this.everything().tickets.find((t) => t.ticketId === id),
      },
      demand: {
        snapshot: async () => this.demandSnapshot(),
        putWait: async (model, agent) => this.putWait(model, agent),
        clearWait: async (model, agent) => this.deleteDemand(`wait\u0000${model}\u0000${agent}`),
        putIntents: async (agent, thread, models) => this.putIntents(agent, thread, models),
        clearThread: async (thread, agent) => this.clearThread(thread, agent),
        recordUse: async (model, agent, _lingerMs, serviceMs, band) =>
          this.recordUse(model, agent, serviceMs ?? 0, band),
        recordSelection: async (crew, agent, models) => this.recordSelection(crew, agent, models),
        putQueue: async (e) => this.putDemand(`queue\u0000${e.model}\u0000${e.id}`, e),
        clearQueue: async (model, _agent, id) => this.deleteDemand(`queue\u0000${model}\u0000${id}`),
        putService: async (e, _agent, instance) => this.putDemand(`svc\u0000${e.crew}\u0000${instance}`, e),
        services: () => this.services(),
        flush: async () => undefined,
      },
      capacity: {
        get counter() {
          return shared.counter;
        },
        available: true,
        awaitChange: (since, deadlineMs, signal) => this.awaitChange(since, deadlineMs, signal),
      },
    };
  }

  // ── tickets ───────────────────────────────────────────────────────────────────────────────

  private everything(): {
    tickets: Ticket[];
    residencies: Residency[];
    suspects: Map<string, number>;
    conversations: ConversationIndex;
  } {
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
    const tickets = this.ticketsArr.filter((t) => t.expiresAt === undefined || t.expiresAt > now);
    // The records' bucket TTL: one unwritten for as long is gone.
    const conversations: ConversationSeen[] = [];
    for (const [key, c] of this.conversations) {
      if (now - c.atMs > this.overlayTtlMs) this.conversations.delete(key);
      else conversations.push(c);
    }
    return {
      tickets,
      residencies,
      suspects: this.suspects,
      conversations: indexConversations(conversations),
    };
  }

  /** The state layer's claim (docs/rules/state.md §6), decided on the current state at once. */
  private claim(holder: string, req: ClaimRequest): ClaimResult {
    const state = this.published.get(req.provider);
    if (state === undefined) return { ok: false, reason: "provider-unknown", stats: NO_STATS };
    const now = this.now();
    const liveNow = now - LEASE_GRACE_MS;
    const { tickets: all, residencies: allRes } = this.everything();
    const view = all.filter((t) => t.provider === req.provider);
    const residencies = allRes.filter((r) => r.provider === req.provider);
    if (req.slots !== undefined && req.slots > 0) {
      const held = view.filter((t) => t.modelName === req.model).length;
      if (held >= req.slots) return { ok: false, reason: "no-slot", stats: NO_STATS };
    }
    const ticket: Ticket = {
      ticketId: `t${++this.ticketSeq}`,
      provider: req.provider,
      modelFootprintMiB: req.modelFootprintMiB,
      kvCacheFootprintMiB: req.kvCacheFootprintMiB ?? 0,
      holderId: holder,
      claimedAt: new Date(now).toISOString(),
      modelName: req.model,
      evicts: req.evicts ?? {},
      ...(req.leaseMs !== undefined ? { expiresAt: now + req.leaseMs } : {}),
    };
    const d = claimVerdict({ state, tickets: view, residencies }, ticket, liveNow);
    if (!d.ok) {
      return { ok: false, reason: d.reason, stats: NO_STATS, ...(d.victim ? { victim: d.victim } : {}) };
    }
    ticket.coldLoad = d.coldLoad;
    this.tickets.set(ticket.ticketId, ticket);
    this.ticketsArr = undefined;
    this.changed = true;
    return {
      ok: true,
      ticket,
      key: `${ticket.provider}__${ticket.ticketId}`,
      coldLoad: d.coldLoad,
      stats: NO_STATS,
    };
  }

  private release(ref: TicketRef): void {
    if (!this.tickets.delete(ref.ticketId)) return;
    this.ticketsArr = undefined;
    this.changed = true;
  }

  private renew(ref: TicketRef, leaseMs: number): Ticket {
    const t = this.tickets.get(ref.ticketId);
    if (t === undefined) throw new RangeError(`sim: renew of unknown ticket ${ref.ticketId}`);
    const renewed = { ...t, expiresAt: this.now() + leaseMs };
    this.tickets.set(t.ticketId, renewed);
    this.ticketsArr = undefined;
    return renewed;
  }

  private allTickets(): Map<string, Ticket[]> {
    const out = new Map<string, Ticket[]>();
    for (const t of this.everything().tickets) out.set(t.provider, [...(out.get(t.provider) ?? []), t]);
    return out;
  }

  private writeResidency(r: Residency): void {
    this.overlays.set(`${r.provider}\u0000${r.modelName}`, {
      residency: r,
      expiresAtMs: this.now() + this.overlayTtlMs,
    });
    this.changed = true;
  }

  private clearResidency(provider: string, model: string): void {
    if (this.overlays.delete(`${provider}\u0000${model}`)) this.changed = true;
  }

  // ── the capacity watch ────────────────────────────────────────────────────────────────────

  private awaitChange(since: number, deadlineMs: number, signal?: AbortSignal): Promise<ChangeResult> {
    if (signal?.aborted) return Promise.resolve({ kind: "aborted", counter: this.counter });
    if (this.counter > since) return Promise.resolve({ kind: "changed", counter: this.counter });
    return new Promise((resolve) => {
      // A microsecond past the deadline: the epoch offset costs the clock its last bits.
      const timer = this.loop.at(deadlineMs - EPOCH_MS + 0.001, () =>
        w.settle({ kind: "deadline", counter: this.counter }),
      );
      const w: Waiter = {
        since,
        settle: (r) => {
          this.waiters.delete(w);
          timer.cancel();
          resolve(r);
        },
      };
      this.waiters.add(w);
    });
  }

  // ── demand ────────────────────────────────────────────────────────────────────────────────

  private putWait(model: string, agent: string): WaitEntry {
    const e: WaitEntry = { kind: "wait", model, agent, expiresAt: this.now() + WAIT_ENTRY_TTL_MS };
    this.putDemand(`wait\u0000${model}\u0000${agent}`, e);
    return e;
  }

  private putIntents(agent: string, thread: string, models: readonly string[]): IntentEntry[] {
    const expiresAt = this.now() + INTENT_TTL_MS;
    return [...new Set(models)].map((model) => {
      const e: IntentEntry = { kind: "intent", model, agent, thread, expiresAt };
      this.putDemand(`intent\u0000${model}\u0000${agent}`, e);
      return e;
    });
  }

  private clearThread(thread: string, agent?: string): number {
    let n = 0;
    for (const [key, e] of this.demand) {
      if (e.kind !== "intent" || e.thread !== thread || (agent !== undefined && e.agent !== agent)) continue;
      this.deleteDemand(key);
      n++;
    }
    return n;
  }

  private recordUse(model: string, agent: string, serviceMs: number, band: Band | undefined): UseEntry {
    const now = this.now();
    const key = `use\u0000${model}`;
    const prev = this.demand.get(key);
    const old = prev?.kind === "use" && prev.expiresAt > now ? prev : undefined;
    const service = serviceMs > 0 ? recordLatency(old?.serviceMs, serviceMs) : old?.serviceMs;
    const bands = band !== undefined ? { ...old?.bands, [band]: now } : old?.bands;
    const e: UseEntry = {
      kind: "use",
      model,
      agent,
      rate: bumpRate(old?.rate ?? 0, old?.updatedAt ?? now, now),
      updatedAt: now,
      lastUsedAt: now,
      expiresAt: now + RATE_ENTRY_TTL_MS,
      ...(service !== undefined ? { serviceMs: service } : {}),
      ...(bands !== undefined ? { bands } : {}),
    };
    this.putDemand(key, e);
    return e;
  }

  private recordSelection(crew: string, agent: string, models: readonly string[]): SelEntry {
    const now = this.now();
    const key = `sel\u0000${crew}\u0000${agent}`;
    const prev = this.demand.get(key);
    const old = prev?.kind === "sel" && prev.expiresAt > now ? prev : undefined;
    const e: SelEntry = {
      kind: "sel",
      rate: bumpRate(old?.rate ?? 0, old?.updatedAt ?? now, now),
      updatedAt: now,
      expiresAt: now + RATE_ENTRY_TTL_MS,
      models: [...new Set(models)],
    };
    this.putDemand(key, e);
    return e;
  }

  private services(): ServiceEntry[] {
    const now = this.now();
    const out: ServiceEntry[] = [];
    for (const e of this.demand.values()) if (e.kind === "svc" && e.expiresAt > now) out.push(e);
    return out;
  }

  /** Live entries, rebuilt only when an entry changed or the clock moved. */
  private demandSnapshot(): DemandSnapshot {
    const atMs = this.now();
    const c = this.demandCache;
    if (c !== undefined && c.rev === this.demandRev && c.at === atMs) return c.value;
    const live: DemandEntry[] = [];
    for (const [key, e] of this.demand) {
      if (e.expiresAt <= atMs) this.demand.delete(key);
      else live.push(e);
    }
    const s = demandSnapshotOf(atMs, live);
    this.demandCache = { rev: this.demandRev, at: atMs, value: s };
    return s;
  }

  private putDemand(key: string, e: DemandEntry): void {
    this.demand.set(key, e);
    this.demandRev++;
  }

  private deleteDemand(key: string): void {
    if (this.demand.delete(key)) this.demandRev++;
  }
}
