// Expected seconds, the currency of the default ("time") policy (docs/rules/placement.md §5):
// how long a call would take to finish on an option — queueing for a slot, loading the model,
// unloading others first — from what this sidecar measured (service times per model, the load
// rate per provider) and the defaults before it has measured anything.
import { DEFAULT_CALL_TIME_S, LOAD_MIB_PER_S, UNLOAD_S } from "./constants.js";
import { expectedReloads, type ModelDemand } from "./demand.js";
import { fixedWaitS } from "./fixed-engine.js";
import { nameEstimateMiB } from "./occupancy.js";
import { queueWaitS } from "./queue-or-unload.js";
import { serviceMsPerMiB, sizePriorMs } from "./service-prior.js";
import { oldestClaimedMs, type ProviderView, type SnapshotIndex, slotsOf } from "./snapshot.js";

/** The fleet's measured service per MiB, once per index (an index is one instant's snapshot). */
const perMiB = new WeakMap<SnapshotIndex, number | undefined>();

function msPerMiB(ix: SnapshotIndex): number | undefined {
  if (perMiB.has(ix)) return perMiB.get(ix);
  const onFixed = (model: string) => (ix.warmAt.get(model) ?? []).some((v) => v.fixed);
  // Models measured where they load (their time and footprint on the same kind of runner);
  // else, before anything ran there, those a fixed engine serves, sized by their names.
  let rate = serviceMsPerMiB(ix.demand, (model) => {
    if (onFixed(model)) return undefined;
    const occ = ix.occupancy(model);
    return occ.known ? occ.mib : undefined;
  });
  rate ??= serviceMsPerMiB(ix.demand, (model) => (onFixed(model) ? nameEstimateMiB(model) : undefined));
  perMiB.set(ix, rate);
  return rate;
}

/** The size prior of a model nobody has measured (ms), when its footprint is known. */
function priorMs(ix: SnapshotIndex, model: string): number | undefined {
  const occ = ix.occupancy(model);
  return occ.known ? sizePriorMs(msPerMiB(ix), occ.mib) : undefined;
}

/**
 * How long one call of `model` keeps a slot on `v` busy (s), loads excluded: this sidecar's
 * measurement there, else the fleet's for the model (shared through its use entry), else the
 * size prior (the fleet's measured models scaled by footprint), else this sidecar's latency on
 * `v`, else the default.
 */
export function serviceS(ix: SnapshotIndex, v: ProviderView, model: string): number {
  const fleet = ix.demand.get(model)?.serviceMs;
  const ms =
    v.serviceByModel?.get(model) ??
    (fleet !== undefined && fleet > 0 ? fleet : (priorMs(ix, model) ?? v.latencyEmaMs));
  if (ms !== undefined && Number.isFinite(ms) && ms >= 0) return ms / 1000;
  return ix.options.defaultCallTimeS ?? DEFAULT_CALL_TIME_S;
}

/**
 * Seconds to load `footprintMiB` on `v`: at the rate measured there, else the rate measured on
 * the other providers (the mean), else the default.
 */
export function loadS(ix: SnapshotIndex, v: ProviderView, footprintMiB: number): number {
  const own = v.loadMiBPerS !== undefined && v.loadMiBPerS > 0 ? v.loadMiBPerS : undefined;
  const rate = own ?? ix.fleetLoadMiBPerS ?? LOAD_MIB_PER_S;
  return Math.max(0, footprintMiB) / rate;
}

/**
 * Seconds until a slot of `model`'s copy on `v` frees (0 with a free slot). On a fixed-model
 * engine: until it can start one more request, from its requests ahead and its capacity
 * (docs/rules/engines.md "Placement").
 */
export function slotWaitS(ix: SnapshotIndex, v: ProviderView, model: string): number {
  if (v.fixed) return v.ahead < v.capacity ? 0 : fixedWaitS(v.ahead, v.capacity, serviceS(ix, v, model));
  const mt = v.byModel.get(model);
  const slots = slotsOf(v, model);
  // A free slot waits for nothing: spares parsing the copy's claim times on every call.
  if (mt === undefined || mt.count < slots) return 0;
  return queueWaitS({
    tickets: mt.count,
    slots,
    oldestElapsedS: (ix.nowMs - oldestClaimedMs(mt, ix.nowMs)) / 1000,
    callTimeS: serviceS(ix, v, model),
  });
}

/** Seconds the calls ahead keep a copy's slots busy once it runs (none started yet). */
export function queuedBehindS(ix: SnapshotIndex, v: ProviderView, model: string): number {
  const ahead = v.byModel.get(model)?.count ?? 0;
  const slots = slotsOf(v, model);
  if (ahead < slots) return 0;
  return (Math.floor((ahead - slots) / slots) + 1) * serviceS(ix, v, model);
}

/** Seconds left of a load in flight on `v` (its oldest ticket started it). */
export function loadLeftS(ix: SnapshotIndex, v: ProviderView, model: string): number {
  const mt = v.byModel.get(model);
  const elapsedS = mt === undefined ? 0 : (ix.nowMs - oldestClaimedMs(mt, ix.nowMs)) / 1000;
  return Math.max(0, loadS(ix, v, v.loading.get(model) ?? 0) - elapsedS);
}

/** A victim as the unload's price sees it. */
export interface PricedVictim {
  footprintMiB: number;
  demand: ModelDemand | undefined;
}

/**
 * What unloading `victims` on `v` costs others (s): each victim's unload, plus its reload as
 * often as its own demand expects it back (waiters, intents, half its recent and predicted
 * use) — so an unload pays for itself only when the call gains more than that.
 */
export function unloadPriceS(ix: SnapshotIndex, v: ProviderView, victims: readonly PricedVictim[]): number {
  let s = 0;
  for (const x of victims) s += UNLOAD_S + loadS(ix, v, x.footprintMiB) * expectedReloads(x.demand);
  return s;
}
