// "Could this provider hold this model in VRAM at all?" — judged without the room other
// models take right now (that is busy, not too small). Used to tell prompt-too-large and
// model-too-large apart from gpu-busy (docs/rules/placement.md §3).
import { isWarm } from "./feasibility.js";
import { lists, type ProviderView, type SnapshotIndex } from "./snapshot.js";

/**
 * True when the model is warm on the provider, or the provider's total is known and its
 * usable VRAM is at least the model's known occupancy. Readiness and circuits are ignored:
 * they change by themselves, so they never prove that waiting is useless.
 */
export function couldHold(ix: SnapshotIndex, v: ProviderView, model: string): boolean {
  if (isWarm(v, model)) return true;
  if (!lists(v, model)) return false;
  const occ = ix.occupancy(model);
  return v.totalKnown && occ.known && occ.mib <= v.usable;
}

/** Whether some non-stale provider could hold one of the models in VRAM. */
export function anyCanRun(ix: SnapshotIndex, models: readonly string[]): boolean {
  for (const v of ix.providers) {
    if (v.ineligible === "stale") continue;
    for (const m of models) if (couldHold(ix, v, m)) return true;
  }
  return false;
}
