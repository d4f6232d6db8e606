// Occupancy of a model (docs/rules/placement.md §2): the VRAM a loaded copy takes, KV cache
// included. Sources in order of trust: what a provider observed (/api/ps), what the Model
// declares, the on-disk size scaled up, and finally a guess from the parameter count in the
// name. Unknown occupancy never places a cold load.
import { NAME_ESTIMATE_BASE_MIB, NAME_ESTIMATE_MIB_PER_BILLION, OCCUPANCY_DISK_FACTOR } from "./constants.js";
import type { ProviderState } from "./shapes.js";

/** Where an occupancy figure came from. */
export type OccupancySource = "observed" | "declared" | "on-disk" | "name-estimate";

/** A resolved occupancy in MiB, or unknown. */
export type Occupancy = { known: true; mib: number; source: OccupancySource } | { known: false };

// A number directly followed by "b" (billions of parameters); "b" must not start a longer
// word, so "4bit" is not a parameter count.
const PARAMS_RE = /(\d+(?:\.\d+)?)b(?![a-z])/g;

/**
 * Parameters in billions named in a model id: the largest `<number>b` of the lowercase name,
 * or undefined when the name has none. `qwen3:30b-a3b` → 30.
 */
export function paramsFromName(model: string): number | undefined {
  let best: number | undefined;
  for (const m of model.toLowerCase().matchAll(PARAMS_RE)) {
    const n = Number(m[1]);
    if (Number.isFinite(n) && n > 0 && (best === undefined || n > best)) best = n;
  }
  return best;
}

/** Last-resort estimate: ceil(params) × 800 + 1024 MiB; undefined without a parameter count. */
export function nameEstimateMiB(model: string): number | undefined {
  const b = paramsFromName(model);
  if (b === undefined) return undefined;
  return Math.ceil(b) * NAME_ESTIMATE_MIB_PER_BILLION + NAME_ESTIMATE_BASE_MIB;
}

function positive(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
}

/** Largest observed /api/ps footprint of `model` over providers; 0 when none. */
export function observedFootprintMiB(model: string, providers: Iterable<ProviderState>): number {
  let best = 0;
  for (const p of providers) best = Math.max(best, positive(p.loadedModelFootprintsMiB?.[model]));
  return best;
}

/** Largest on-disk size of `model` over providers (from /api/tags); 0 when none. */
export function onDiskMiB(model: string, providers: Iterable<ProviderState>): number {
  let best = 0;
  for (const p of providers) best = Math.max(best, positive(p.availableModelFootprintsMiB?.[model]));
  return best;
}

/**
 * Occupancy of `model` from the figures already gathered. Each figure ≤ 0 means "none".
 * Observed → declared (Model.spec.vramMib) → ceil(on-disk × 1.2) → name estimate → unknown.
 */
export function occupancyFrom(
  model: string,
  observedMiB: number,
  declaredMiB: number | undefined,
  diskMiB: number,
): Occupancy {
  if (positive(observedMiB) > 0) return { known: true, mib: observedMiB, source: "observed" };
  if (positive(declaredMiB) > 0) return { known: true, mib: declaredMiB!, source: "declared" };
  if (positive(diskMiB) > 0) {
    return { known: true, mib: Math.ceil(diskMiB * OCCUPANCY_DISK_FACTOR), source: "on-disk" };
  }
  const est = nameEstimateMiB(model);
  return est === undefined ? { known: false } : { known: true, mib: est, source: "name-estimate" };
}

/** Occupancy of `model` resolved over every provider's published state. */
export function resolveOccupancy(
  model: string,
  providers: Iterable<ProviderState>,
  declaredMiB?: number,
): Occupancy {
  const list = [...providers];
  return occupancyFrom(model, observedFootprintMiB(model, list), declaredMiB, onDiskMiB(model, list));
}
