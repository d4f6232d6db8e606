// The embeddings case of bench proxy: POST /api/embed with batched inputs, straight to the
// emulator vs through the proxy (placed, ticketed and released like a chat call), several
// callers at once. Rounds run in pairs, alternating which goes first; the ratio is the median
// over the pairs of proxied ÷ direct inputs embedded per second.
//
// Twice, with one difference: how fast the emulated GPU evaluates the inputs. EMBED_MODEL runs
// at EMBED_PROMPT_TOKENS_PER_S, about 10 ms for a call of 16 inputs, at the fast end of the
// 15-50 ms published for local embedding calls on a GPU: the proxy's cost beside a GPU's. The
// same model at the chat model's 1,000,000 tokens/s (SATURATED_EMBED_MODEL) has the emulator
// spend its whole time on vectors and JSON on the CPU, which the client, the emulator and the
// proxy share (2 cores here; in a pod the engine runs elsewhere): that ratio measures the
// machine's CPU split more than the proxy, and is reported beside the target's.
import type { Dispatcher } from "undici";
import { round3 } from "../lib/measure.js";
import { percentile } from "../lib/report.js";
import { pairedRounds } from "./paired.js";

export const EMBED_MODEL = "nomic-embed-text";
/** The same model, evaluated as fast as the emulator's CPU allows. */
export const SATURATED_EMBED_MODEL = "nomic-embed-text:saturated";
/** Prompt tokens/s of EMBED_MODEL on the emulated GPU. */
export const EMBED_PROMPT_TOKENS_PER_S = 20_000;

async function embedCall(
  dispatcher: Dispatcher,
  base: string,
  model: string,
  seq: number,
  batch: number,
): Promise<number> {
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
    body: JSON.stringify({ model, input }),
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
  model: string,
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
        n += await embedCall(dispatcher, base, model, round * 10_000 + c * 100 + i, batch);
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
  model: string,
  direct: string,
  proxied: string,
  rounds: number,
  callers = 8,
  calls = 4,
  batch = 16,
): Promise<EmbedCase> {
  // Warm-up: the model loads, the proxy learns the context it runs with, connections open.
  await embedRound(dispatcher, direct, model, 1, 1, batch, 0);
  await embedRound(dispatcher, proxied, model, callers, 1, batch, 0);
  // Numbered from 1: round 0 is the warm-up's.
  const { d, p } = await pairedRounds(
    rounds,
    (r) => embedRound(dispatcher, direct, model, callers, calls, batch, r),
    (r) => embedRound(dispatcher, proxied, model, callers, calls, batch, r),
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
