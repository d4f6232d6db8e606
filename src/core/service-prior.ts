// An honest prior for a model nobody has measured yet (docs/rules/placement.md §5.1): decoding
// reads every weight once per token, so a call's time grows with the model's size. A flat
// default would price an unmeasured small model slower than any measured big one, and a policy
// that compares seconds would then never try it, so it would stay unmeasured for good.
import type { ModelDemand } from "./demand.js";

/**
 * Milliseconds of service per MiB of footprint over the models the fleet has measured (their
 * `serviceMs` over their footprints, summed so that each model weighs by its size); undefined
 * when none has both. `sizeOf` is undefined for a model whose time says nothing about its size
 * (unknown footprint, or served by a fixed-model engine: other hardware, batched).
 */
export function serviceMsPerMiB(
  demand: ReadonlyMap<string, ModelDemand>,
  sizeOf: (model: string) => number | undefined,
): number | undefined {
  let ms = 0;
  let mib = 0;
  for (const [model, d] of demand) {
    if (!(Number.isFinite(d.serviceMs) && d.serviceMs > 0)) continue;
    const size = sizeOf(model);
    if (size === undefined || !(size > 0)) continue;
    ms += d.serviceMs;
    mib += size;
  }
  return mib > 0 ? ms / mib : undefined;
}

/** The prior service time of a model of `footprintMiB` (ms), from the fleet's rate per MiB. */
export function sizePriorMs(msPerMiB: number | undefined, footprintMiB: number): number | undefined {
  if (msPerMiB === undefined || !(footprintMiB > 0)) return undefined;
  return msPerMiB * footprintMiB;
}
