// What a ModelProvider has, read from its status (or its declared memory when no probe has
// reported VRAM). Unknown stays unknown: 0 and absent values never mean "no room".
import { usableMiB } from "../core/index.js";
import type { ModelProvider } from "./types.js";

export const DEFAULT_PROVIDER_WEIGHT = 100;

function positive(n: number | undefined): number | undefined {
  return n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Total VRAM: the probed `status.capacity.vramTotalMiB`, else `spec.scheduling.memoryMiB`. */
export function vramTotalMiB(p: ModelProvider): number | undefined {
  return positive(p.status.capacity?.vramTotalMiB) ?? positive(p.spec.scheduling?.memoryMiB);
}

/** Parallel slots, when known. */
export function maxParallel(p: ModelProvider): number | undefined {
  return positive(p.status.capacity?.maxParallel);
}

/** VRAM held by resident models: their footprints, else `vramUsedMiB`, else 0. */
export function residentMiB(p: ModelProvider): number {
  const loaded = p.status.capacity?.loadedModels ?? [];
  let sum = 0;
  let sized = false;
  for (const m of loaded) {
    const size = positive(m.sizeMiB);
    if (size !== undefined) {
      sum += size;
      sized = true;
    }
  }
  return sized ? sum : (positive(p.status.capacity?.vramUsedMiB) ?? 0);
}

/** max(0, usable − resident) / usable, with usable from core's reserve rule; 0 when unknown. */
export function freeFraction(p: ModelProvider): number {
  const usable = usableMiB(vramTotalMiB(p) ?? 0);
  if (!(usable > 0)) return 0;
  return Math.max(0, usable - residentMiB(p)) / usable;
}

/** Whether the model id is loaded on the provider (image locality). */
export function isLoaded(p: ModelProvider, modelId: string): boolean {
  return (p.status.capacity?.loadedModels ?? []).some((m) => m.name === modelId);
}

export function providerWeight(p: ModelProvider): number {
  return p.spec.scheduling?.weight ?? DEFAULT_PROVIDER_WEIGHT;
}
