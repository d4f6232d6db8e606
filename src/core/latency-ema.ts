// Per-endpoint call latency (docs/rules/placement.md §4, §5): an EMA with weight 0.4 on the newest
// sample; the first sample seeds it. Used to break cost ties and as the queue's call time.
import { LATENCY_EMA_WEIGHT } from "./constants.js";

/** Latency EMA in ms; undefined until the first sample. */
export type LatencyEma = number | undefined;

/** After one more observed call latency (ms). Non-finite or negative samples are ignored. */
export function recordLatency(ema: LatencyEma, sampleMs: number, weight = LATENCY_EMA_WEIGHT): LatencyEma {
  if (!Number.isFinite(sampleMs) || sampleMs < 0) return ema;
  if (ema === undefined) return sampleMs;
  return ema + weight * (sampleMs - ema);
}
