// Timing helpers shared by the benchmarks: sequential latency samples and closed-loop
// throughput with N concurrent callers. Wall-clock figures are printed, never asserted.
import { performance } from "node:perf_hooks";
import { percentile } from "./report.js";

export interface LatencySummary {
  p50_ms: number;
  p99_ms: number;
  samples: number;
}

/** Runs `fn` sequentially `n` times after `warmup` runs; latency percentiles in ms. */
export async function sequential(
  fn: () => Promise<unknown>,
  n: number,
  warmup = Math.min(200, n),
): Promise<LatencySummary> {
  for (let i = 0; i < warmup; i++) await fn();
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    lat.push(performance.now() - t);
  }
  return { p50_ms: round3(percentile(lat, 50)), p99_ms: round3(percentile(lat, 99)), samples: n };
}

/** `callers` concurrent loops calling `fn` until `total` calls are done; calls per second. */
export async function throughput(
  fn: () => Promise<unknown>,
  callers: number,
  total: number,
): Promise<number> {
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (started < total) {
        started++;
        await fn();
      }
    }),
  );
  return Math.round((total / (performance.now() - t0)) * 1000);
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
