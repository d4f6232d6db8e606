// The paired rounds of bench proxy (docs/benchmarks.md): direct and proxied back to back,
// alternating which goes first so that drift hits both alike; each pair gives a ratio and a
// TTFB difference, and their medians ride out the load swings of a shared machine.
import { round3 } from "../lib/measure.js";
import { percentile } from "../lib/report.js";

/** `rounds` pairs, numbered from `first`: direct goes first in the even-numbered ones. */
export async function pairedRounds<R>(
  rounds: number,
  direct: (r: number) => Promise<R>,
  proxied: (r: number) => Promise<R>,
  first = 0,
): Promise<{ d: R[]; p: R[] }> {
  const d: R[] = [];
  const p: R[] = [];
  for (let r = first; r < first + rounds; r++) {
    if (r % 2 === 0) {
      d.push(await direct(r));
      p.push(await proxied(r));
    } else {
      p.push(await proxied(r));
      d.push(await direct(r));
    }
  }
  return { d, p };
}

/** One round of concurrent streams: each stream's TTFB, and tokens per second over the round. */
export interface StreamRound {
  ttfb: number[];
  rate: number;
}

export interface StreamCase {
  direct_ttfb_p50_ms: number;
  proxy_ttfb_p50_ms: number;
  added_ttfb_p50_ms: number;
  direct_tokens_per_s: number;
  proxy_tokens_per_s: number;
  throughput_ratio: number;
  throughput_ratio_min: number;
  throughput_ratio_max: number;
}

/** The fields of a streaming case from its paired rounds (d[k] and p[k] are a pair). */
export function streamCase(d: readonly StreamRound[], p: readonly StreamRound[]): StreamCase {
  const ratios = d.map((x, k) => (p[k] as StreamRound).rate / x.rate);
  const added = d.map((x, k) => percentile((p[k] as StreamRound).ttfb, 50) - percentile(x.ttfb, 50));
  return {
    direct_ttfb_p50_ms: round2(
      percentile(
        d.flatMap((x) => x.ttfb),
        50,
      ),
    ),
    proxy_ttfb_p50_ms: round2(
      percentile(
        p.flatMap((x) => x.ttfb),
        50,
      ),
    ),
    added_ttfb_p50_ms: round2(percentile(added, 50)),
    direct_tokens_per_s: Math.round(
      percentile(
        d.map((x) => x.rate),
        50,
      ),
    ),
    proxy_tokens_per_s: Math.round(
      percentile(
        p.map((x) => x.rate),
        50,
      ),
    ),
    throughput_ratio: round3(percentile(ratios, 50)),
    throughput_ratio_min: round3(Math.min(...ratios)),
    throughput_ratio_max: round3(Math.max(...ratios)),
  };
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
