// The embeddings case of bench proxy: POST /api/embed with batched inputs, straight to the
// emulator vs through the proxy (placed, ticketed and released like a chat call), several
// callers at once. Rounds run in pairs, alternating which goes first; the ratio is the median
// over the pairs of proxied ÷ direct inputs embedded per second.
import type { Dispatcher } from "undici";
import { round3 } from "../lib/measure.js";
import { percentile } from "../lib/report.js";
import { pairedRounds } from "./paired.js";

export const EMBED_MODEL = "nomic-embed-text";

async function embedCall(dispatcher: Dispatcher, base: string, seq: number, batch: number): Promise<number> {
  const url = new URL(base);
  const input = Array.from(
    { length: batch },
    (_, k) => `Document ${seq}-${k}: how GPUs are shared between agents.`,
  );
  const res = await dispatcher.request({
    origin: url.origin,
    path: "/api/embed",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: EMBED_MODEL, input }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200)
    throw new Error(`${base}/api/embed: status ${res.statusCode}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { embeddings?: unknown[] };
  if (body.embeddings?.length !== batch)
    throw new Error(`${base}/api/embed: ${body.embeddings?.length} vectors`);
  return batch;
}

/** Inputs per second of one round: `callers` concurrent callers, `calls` sequential calls each. */
async function embedRound(
  dispatcher: Dispatcher,
  base: string,
  callers: number,
  calls: number,
  batch: number,
  round: number,
): Promise<number> {
  const t0 = performance.now();
  const counts = await Promise.all(
    Array.from({ length: callers }, async (_, c) => {
      let n = 0;
      for (let i = 0; i < calls; i++)
        n += await embedCall(dispatcher, base, round * 10_000 + c * 100 + i, batch);
      return n;
    }),
  );
  return counts.reduce((a, b) => a + b, 0) / ((performance.now() - t0) / 1000);
}

export interface EmbedCase {
  embed_callers: number;
  embed_batch: number;
  embed_direct_inputs_per_s: number;
  embed_proxy_inputs_per_s: number;
  embed_throughput_ratio: number;
  embed_throughput_ratio_min: number;
  embed_throughput_ratio_max: number;
}

export async function runEmbedCase(
  dispatcher: Dispatcher,
  direct: string,
  proxied: string,
  rounds: number,
  callers = 8,
  calls = 4,
  batch = 16,
): Promise<EmbedCase> {
  // Warm-up: the model loads, the proxy learns the context it runs with, connections open.
  await embedRound(dispatcher, direct, 1, 1, batch, 0);
  await embedRound(dispatcher, proxied, callers, 1, batch, 0);
  // Numbered from 1: round 0 is the warm-up's.
  const { d, p } = await pairedRounds(
    rounds,
    (r) => embedRound(dispatcher, direct, callers, calls, batch, r),
    (r) => embedRound(dispatcher, proxied, callers, calls, batch, r),
    1,
  );
  const ratios = d.map((x, k) => (p[k] as number) / x);
  return {
    embed_callers: callers,
    embed_batch: batch,
    embed_direct_inputs_per_s: Math.round(percentile(d, 50)),
    embed_proxy_inputs_per_s: Math.round(percentile(p, 50)),
    embed_throughput_ratio: round3(percentile(ratios, 50)),
    embed_throughput_ratio_min: round3(Math.min(...ratios)),
    embed_throughput_ratio_max: round3(Math.max(...ratios)),
  };
}
