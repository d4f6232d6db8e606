// A decision's input and its per-snapshot index. The index is built once per state snapshot
// (one pass over providers, tickets and residencies) so that each decision afterwards only
// looks things up: no rescans of tickets per provider or per candidate.
import type { CircuitState } from "./circuit-breaker.js";
import { DEFAULT_CALL_TIME_S, MAX_VICTIMS_CONSIDERED, PROVIDER_STALE_MS } from "./constants.js";
import { type ConversationIndex, NO_CONVERSATIONS } from "./conversation-seen.js";
import { type CostWeights, DEFAULT_COST_WEIGHTS } from "./cost.js";
import type { ModelDemand } from "./demand.js";
import { type IneligibleReason, ineligibility } from "./eligibility.js";
import { isFixedModelEngine } from "./engines.js";
import { fixedCapacity, fixedLoad } from "./fixed-engine.js";
import { parseIsoMs } from "./iso-time.js";
import { type Occupancy, occupancyFrom } from "./occupancy.js";
import type { ProviderState, Residency, Ticket } from "./shapes.js";
import type { SuccessRate } from "./success-rate.js";
import { overlayCurrent, usableMiB } from "./vram.js";

/** What a sidecar has observed about one provider's calls. */
export interface ProviderHealth {
  circuit?: CircuitState;
  /** Latency EMA of calls to this endpoint (ms); undefined before the first sample. */
  latencyEmaMs?: number;
  /** Success rate of calls per model on this provider. */
  successByModel?: ReadonlyMap<string, SuccessRate>;
  /** Per model, the EMA of a call's time without its load (ms): what a slot is busy for. */
  serviceByModel?: ReadonlyMap<string, number>;
  /** EMA of the load rate measured on cold loads here (MiB/s). */
  loadMiBPerS?: number;
  /** Per model, the EMA of the prompt tokens evaluated per second here (uncached tokens only). */
  prefillByModel?: ReadonlyMap<string, number>;
}

/**
 * The name of a registered placement policy (./policies): "time" (the default) chooses by
 * expected seconds until the call finishes, "kubemoot" by the weighted cost and its five steps
 * (docs/rules/placement.md §4, §5).
 */
export type PolicyName = string;

/** Everything one decision reads. */
export interface PlacementSnapshot {
  providers: readonly ProviderState[];
  /** Tickets of every provider (expired leases are ignored). */
  tickets: readonly Ticket[];
  residencies: readonly Residency[];
  /** Aggregated demand per model (see aggregateDemand); absent = none. */
  demand?: ReadonlyMap<string, ModelDemand>;
  /** Health per provider name; absent = no observations (closed circuit, success 1.0). */
  health?: ReadonlyMap<string, ProviderHealth>;
  /** Model.spec.vramMib per model name, when declared (MiB). */
  declaredVramMiB?: ReadonlyMap<string, number>;
  /**
   * Providers a sidecar found unreachable (a refused or reset connection), with when (epoch
   * ms): ineligible until a probe newer than that.
   */
  suspects?: ReadonlyMap<string, number>;
  /** Conversations the sidecars published on copies, indexed (docs/rules/placement.md §5.5). */
  conversations?: ConversationIndex;
  /** The decision's clock (epoch ms). */
  nowMs: number;
}

/** Knobs of the planner; every default comes from constants.ts. */
export interface PlannerOptions {
  policy: PolicyName;
  weights: CostWeights;
  /** Call time assumed without a latency EMA (s). */
  defaultCallTimeS: number;
  maxVictimsConsidered: number;
  /** Provider state older than this is ignored (ms). */
  staleMs: number;
  /**
   * How many times a second copy's load counts against a queue (the time policy): the copy
   * holds its room long after this call. Default SECOND_COPY_LOADS; a knob for experiments.
   */
  secondCopyLoads?: number;
}

export const DEFAULT_PLANNER_OPTIONS: PlannerOptions = Object.freeze({
  policy: "time" as PolicyName,
  weights: DEFAULT_COST_WEIGHTS,
  defaultCallTimeS: DEFAULT_CALL_TIME_S,
  maxVictimsConsidered: MAX_VICTIMS_CONSIDERED,
  staleMs: PROVIDER_STALE_MS,
});

/** Live tickets of one model on one provider. */
export interface ModelTickets {
  count: number;
  /** Their `claimedAt` values (parsed only when a queue wait needs them). */
  claimedAt: string[];
}

/**
 * Epoch ms of the oldest claim among a copy's tickets (the call that finishes soonest);
 * an unparsable `claimedAt` counts as `nowMs` (just started).
 */
export function oldestClaimedMs(mt: ModelTickets, nowMs: number): number {
  let oldest = nowMs;
  for (const at of mt.claimedAt) oldest = Math.min(oldest, parseMs(at, nowMs));
  return oldest;
}

/** One provider as decisions see it at the snapshot's time. */
export interface ProviderView {
  readonly name: string;
  readonly state: ProviderState;
  /** Undefined when usable now. */
  readonly ineligible: IneligibleReason | undefined;
  readonly totalKnown: boolean;
  /** MiB. */
  readonly usable: number;
  /**
   * Parallel slots per model, at least 1: the calls a copy takes at once (hasFreeSlot). A model
   * in the state's `singleSlotModels` runs one at a time: its waits are estimated with slotsOf.
   */
  readonly slots: number;
  /**
   * A fixed-model engine (docs/rules/engines.md "Placement"): warm for the models it serves and
   * nothing else, its VRAM its own business (no usable room, no residents to unload).
   */
  readonly fixed: boolean;
  /** Fixed engines: requests ahead of a new call (running + waiting, ours since the probe). */
  readonly ahead: number;
  /** Fixed engines: requests it runs at once (its slots, fewer when the KV cache is full). */
  readonly capacity: number;
  /** Models the engine keeps loaded at once; 0 = no known limit. */
  readonly maxLoaded: number;
  /** Resident models (published footprint or overlay, the larger), MiB. */
  readonly resident: ReadonlyMap<string, number>;
  readonly residentSum: number;
  /** Sum of the operator-published /api/ps footprints (for the spill term), MiB. */
  readonly publishedSum: number;
  /** In-flight cold loads per model (one per model), MiB. */
  readonly loading: ReadonlyMap<string, number>;
  readonly loadingSum: number;
  /** Models live tickets plan to unload (still resident), with their footprints. */
  readonly plannedVictims: ReadonlySet<string>;
  /** Credit of those planned victims, counted once each (MiB). */
  readonly credit: number;
  /** max(0, usable − resident − in-flight loads), MiB. */
  readonly free: number;
  /** Live tickets on the provider (all models). */
  readonly active: number;
  readonly byModel: ReadonlyMap<string, ModelTickets>;
  readonly latencyEmaMs: number | undefined;
  readonly successByModel: ReadonlyMap<string, SuccessRate> | undefined;
  /** Per model, the service-time EMA without loads (ms), from this sidecar's calls. */
  readonly serviceByModel: ReadonlyMap<string, number> | undefined;
  /** Measured load rate (MiB/s); undefined before any cold load was measured here. */
  readonly loadMiBPerS: number | undefined;
  /** Per model, the measured prefill rate (prompt tokens/s); undefined before any sample. */
  readonly prefillByModel: ReadonlyMap<string, number> | undefined;
  /** Per resident model, when its residency overlay was written (epoch ms): about when it loaded. */
  readonly residentSince: ReadonlyMap<string, number>;
  /** Per resident model, how long its load took (ms), when the overlay says. */
  readonly residentLoadMs: ReadonlyMap<string, number>;
  /** Loaded copies' context windows (/api/ps context_length), tokens. */
  readonly loadedContexts: ReadonlyMap<string, number>;
  /** The provider's per-request context (OLLAMA_CONTEXT_LENGTH), tokens; undefined unknown. */
  readonly configuredContext: number | undefined;
  /**
   * The models this provider can run: on disk (/api/tags), resident or loading. Undefined when
   * it publishes no on-disk catalog: then any model may be there.
   */
  readonly catalog: ReadonlySet<string> | undefined;
}

/** Whether the provider has the model (on disk, resident or loading), or may have it. */
export function lists(v: ProviderView, model: string): boolean {
  return v.catalog === undefined || v.catalog.has(model);
}

/**
 * Whether a copy of `model` on `v` takes another call now: fewer of our tickets on it than the
 * provider's slots; on a fixed-model engine, fewer requests ahead than it runs at once
 * (docs/rules/engines.md "Placement"). A single-slot model's copy takes as many, and the engine
 * queues all but one of them: its calls are short, so a call waiting there starts the moment
 * the previous one ends, where one waiting in the sidecar would start a claim and a request
 * later. The wait is counted (slotWaitS), so calls still spread over its copies.
 */
export function hasFreeSlot(v: ProviderView, model: string): boolean {
  if (v.fixed) return v.ahead < v.capacity;
  return (v.byModel.get(model)?.count ?? 0) < v.slots;
}

/**
 * Calls a copy of `model` on `v` runs at once: one for a single-slot model (Ollama's embedding
 * models), else the provider's slots. Waits are estimated with it.
 */
export function slotsOf(v: ProviderView, model: string): number {
  // The list is short (a provider's embedding models): no index worth building per snapshot.
  return !v.fixed && v.state.singleSlotModels?.includes(model) === true ? 1 : v.slots;
}

/**
 * Context of `model` on a provider view: the same rule as context-fit.ts contextOf, read
 * from the index's maps (wire objects with model-name keys are slow to probe per decision).
 */
export function contextAt(v: ProviderView, model: string): number | undefined {
  return v.loadedContexts.get(model) ?? v.configuredContext;
}

/** The indexed snapshot a decision runs against. */
export interface SnapshotIndex {
  readonly nowMs: number;
  readonly options: PlannerOptions;
  /** Every provider (stale ones too, flagged), sorted by name. */
  readonly providers: readonly ProviderView[];
  readonly byName: ReadonlyMap<string, ProviderView>;
  /** Providers where a model is warm: resident or loading, and not planned for unload. */
  readonly warmAt: ReadonlyMap<string, readonly ProviderView[]>;
  /** Providers where a live ticket is loading a model right now. */
  readonly loadingAt: ReadonlyMap<string, readonly ProviderView[]>;
  readonly demand: ReadonlyMap<string, ModelDemand>;
  /** Mean load rate measured over the providers that have one (MiB/s); undefined when none. */
  readonly fleetLoadMiBPerS: number | undefined;
  /** Occupancy of a model over the non-stale providers (memoized per index). */
  occupancy(model: string): Occupancy;
  /** Conversations the sidecars published on copies (§5.5). */
  readonly conversations: ConversationIndex;
}

function pos(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
}

function parseMs(iso: string | undefined, fallback: number): number {
  if (typeof iso !== "string") return fallback;
  const t = parseIsoMs(iso);
  return Number.isNaN(t) ? fallback : t;
}

const NO_DEMAND_MAP: ReadonlyMap<string, ModelDemand> = new Map<string, ModelDemand>();
const NO_TICKETS: readonly Ticket[] = Object.freeze([]);
const EMPTY_NUMBERS: ReadonlyMap<string, number> = new Map<string, number>();
const EMPTY_TICKETS: ReadonlyMap<string, ModelTickets> = new Map<string, ModelTickets>();
const EMPTY_SET: ReadonlySet<string> = new Set<string>();

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list === undefined) m.set(k, [v]);
  else list.push(v);
}

/**
 * Indexes a snapshot. Provider names are unique (they are KV keys); should a snapshot
 * repeat one, the entry with the later `lastProbedAt` wins (then the later in the list).
 */
export function indexSnapshot(snap: PlacementSnapshot, options: Partial<PlannerOptions> = {}): SnapshotIndex {
  const opts: PlannerOptions = { ...DEFAULT_PLANNER_OPTIONS, ...options };
  const nowMs = snap.nowMs;

  const states = new Map<string, ProviderState>();
  for (const p of snap.providers) {
    if (p === null || typeof p !== "object" || typeof p.name !== "string") continue;
    const prev = states.get(p.name);
    if (prev === undefined || parseMs(p.lastProbedAt, 0) >= parseMs(prev.lastProbedAt, 0))
      states.set(p.name, p);
  }

  const ticketsBy = new Map<string, Ticket[]>();
  for (const t of snap.tickets) {
    if (t === null || typeof t !== "object" || !states.has(t.provider)) continue;
    if (t.expiresAt !== undefined && !(t.expiresAt > nowMs)) continue; // lease passed
    push(ticketsBy, t.provider, t);
  }
  const overlaysBy = new Map<string, Residency[]>();
  for (const r of snap.residencies) {
    if (r === null || typeof r !== "object" || !states.has(r.provider)) continue;
    push(overlaysBy, r.provider, r);
  }

  const names = [...states.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const providers: ProviderView[] = [];
  const byName = new Map<string, ProviderView>();
  const warmAt = new Map<string, ProviderView[]>();
  const loadingAt = new Map<string, ProviderView[]>();

  // Largest published /api/ps footprint per model over the non-stale providers (occupancy).
  const observed = new Map<string, number>();

  for (const name of names) {
    const state = states.get(name)!;
    const health = snap.health?.get(name);
    const ineligible = ineligibility(state, health?.circuit, nowMs, opts.staleMs, snap.suspects?.get(name));

    const fixed = isFixedModelEngine(state.engine);
    const resident = new Map<string, number>();
    let publishedSum = 0;
    // A fixed engine's published sizes are its preallocation, no model's occupancy: never read.
    const published: Record<string, number> = fixed ? {} : (state.loadedModelFootprintsMiB ?? {});
    for (const model in published) {
      const mib = pos(published[model]);
      publishedSum += mib;
      resident.set(model, Math.max(resident.get(model) ?? 0, mib));
      if (ineligible !== "stale" && mib > (observed.get(model) ?? 0)) observed.set(model, mib);
    }
    for (const model of state.loadedModels ?? []) if (!resident.has(model)) resident.set(model, 0);
    let since: Map<string, number> | undefined;
    let loadedIn: Map<string, number> | undefined;
    for (const r of fixed ? [] : (overlaysBy.get(name) ?? [])) {
      if (!overlayCurrent(state, r)) continue;
      resident.set(r.modelName, Math.max(resident.get(r.modelName) ?? 0, pos(r.modelFootprintMiB)));
      const at = pos(r.writtenAt);
      if (at > 0) {
        since ??= new Map();
        since.set(r.modelName, Math.max(since.get(r.modelName) ?? 0, at));
      }
      const took = pos(r.loadMs);
      if (took > 0) {
        loadedIn ??= new Map();
        loadedIn.set(r.modelName, took);
      }
    }
    let residentSum = 0;
    for (const mib of resident.values()) residentSum += mib;

    // Most providers have no load in flight, no planned victim and few tickets: the shared
    // empty collections below keep the index from allocating for them (it is rebuilt on every
    // state change, so its allocations are the decision's real cost).
    let loading: Map<string, number> | undefined;
    let byModel: Map<string, ModelTickets> | undefined;
    let victims: Set<string> | undefined;
    const tickets = ticketsBy.get(name) ?? NO_TICKETS;
    for (const t of tickets) {
      byModel ??= new Map();
      const mt = byModel.get(t.modelName);
      if (mt === undefined) byModel.set(t.modelName, { count: 1, claimedAt: [t.claimedAt] });
      else {
        mt.count++;
        mt.claimedAt.push(t.claimedAt);
      }
      // Same rule as vram.ts isInFlightLoad: a ticket on a non-resident model is a load in flight
      // (a fixed engine loads nothing: such a ticket only waits to end).
      if (!fixed && !resident.has(t.modelName)) {
        loading ??= new Map();
        loading.set(t.modelName, Math.max(loading.get(t.modelName) ?? 0, pos(t.modelFootprintMiB)));
      }
      const evicts = t.evicts;
      if (!fixed && evicts !== undefined && evicts !== null) {
        for (const v in evicts) {
          if (!resident.has(v)) continue;
          victims ??= new Set();
          victims.add(v);
        }
      }
    }
    let loadingSum = 0;
    if (loading !== undefined) for (const mib of loading.values()) loadingSum += mib;
    // Same rule as vram.ts victimCreditMiB: a victim a live ticket holds gives no credit.
    let credit = 0;
    if (victims !== undefined) for (const v of victims) if (!byModel?.has(v)) credit += resident.get(v) ?? 0;

    let loadedContexts: Map<string, number> | undefined;
    const ctxs = state.loadedModelContextLengths;
    if (ctxs !== undefined && ctxs !== null) {
      for (const model in ctxs) {
        const n = pos(ctxs[model]);
        if (n <= 0) continue;
        loadedContexts ??= new Map();
        loadedContexts.set(model, n);
      }
    }
    const configured = pos(state.contextLength);

    // A fixed engine can run exactly what it serves.
    let catalog: Set<string> | undefined = fixed ? new Set(resident.keys()) : undefined;
    const onDisk = state.availableModelFootprintsMiB;
    if (!fixed && onDisk !== undefined && onDisk !== null) {
      for (const model in onDisk) {
        catalog ??= new Set(resident.keys());
        catalog.add(model);
      }
    }
    if (catalog !== undefined && loading !== undefined)
      for (const model of loading.keys()) catalog.add(model);

    const usable = fixed ? 0 : usableMiB(state.totalVramMiB);
    const slots = Math.max(1, Math.floor(pos(state.maxParallel)));
    const view: ProviderView = {
      name,
      state,
      ineligible,
      totalKnown: !fixed && pos(state.totalVramMiB) > 0,
      usable,
      slots,
      fixed,
      ahead: fixed ? fixedLoad(state, tickets) : tickets.length,
      capacity: fixed ? fixedCapacity(slots, state.activeCount, state.kvCacheUsage) : slots,
      maxLoaded: fixed ? 0 : Math.floor(pos(state.maxLoadedModels)),
      resident,
      residentSum,
      publishedSum,
      loading: loading ?? EMPTY_NUMBERS,
      loadingSum,
      plannedVictims: victims ?? EMPTY_SET,
      credit,
      free: Math.max(0, usable - residentSum - loadingSum),
      active: tickets.length,
      byModel: byModel ?? EMPTY_TICKETS,
      latencyEmaMs: health?.latencyEmaMs,
      successByModel: health?.successByModel,
      serviceByModel: health?.serviceByModel,
      loadMiBPerS: health?.loadMiBPerS,
      prefillByModel: health?.prefillByModel,
      residentSince: since ?? EMPTY_NUMBERS,
      residentLoadMs: loadedIn ?? EMPTY_NUMBERS,
      loadedContexts: loadedContexts ?? EMPTY_NUMBERS,
      configuredContext: configured > 0 ? configured : undefined,
      catalog,
    };
    providers.push(view);
    byName.set(name, view);
    if (ineligible === "stale") continue; // ignored state: never a copy to use
    for (const model of resident.keys()) if (!victims?.has(model)) push(warmAt, model, view);
    for (const model of view.loading.keys()) {
      push(warmAt, model, view);
      push(loadingAt, model, view);
    }
  }

  const occCache = new Map<string, Occupancy>();
  const fresh = providers.filter((v) => v.ineligible !== "stale");
  const occupancy = (model: string): Occupancy => {
    let o = occCache.get(model);
    if (o === undefined) {
      const seen = observed.get(model) ?? 0;
      const declared = snap.declaredVramMiB?.get(model);
      let disk = 0;
      if (seen <= 0 && !(pos(declared) > 0)) {
        // Only now is the on-disk size needed: one scan of the fresh providers' /api/tags.
        for (const v of fresh)
          if (!v.fixed) disk = Math.max(disk, pos(v.state.availableModelFootprintsMiB?.[model]));
      }
      o = occupancyFrom(model, seen, declared, disk);
      occCache.set(model, o);
    }
    return o;
  };

  let rates = 0;
  let rateSum = 0;
  for (const v of providers) {
    if (v.loadMiBPerS !== undefined && v.loadMiBPerS > 0) {
      rates++;
      rateSum += v.loadMiBPerS;
    }
  }

  return {
    nowMs,
    options: opts,
    fleetLoadMiBPerS: rates > 0 ? rateSum / rates : undefined,
    providers,
    byName,
    warmAt,
    loadingAt,
    demand: snap.demand ?? NO_DEMAND_MAP,
    occupancy,
    conversations: snap.conversations ?? NO_CONVERSATIONS,
  };
}
