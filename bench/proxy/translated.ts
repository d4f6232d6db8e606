// The translated case of bench proxy: Ollama-API chat streamed through the proxy onto an engine
// that speaks only OpenAI's API (its provider state says engine "vllm"), which the proxy
// translates (SSE in, NDJSON out), vs the same stream asked of the engine's OpenAI route
// directly. 1 stream (added TTFB) and 32 streams (throughput), rounds in pairs alternating
// which goes first; ratio and added TTFB are medians over the pairs.
import type { Dispatcher } from "undici";
import { pairedRounds, type StreamCase, type StreamRound, streamCase } from "./paired.js";

/** The model the OpenAI-only engine serves (a second emulator, published as engine "vllm"). */
export const ENGINE_MODEL = "qwen3:4b";

interface One {
  ttfbMs: number;
  tokens: number;
}

async function post(dispatcher: Dispatcher, base: string, path: string, body: unknown) {
  const url = new URL(base);
  return dispatcher.request({
    origin: url.origin,
    path,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Streams one answer; `proxied`: /api/chat through the proxy, else /v1/chat/completions direct. */
async function streamOne(
  dispatcher: Dispatcher,
  base: string,
  proxied: boolean,
  i: number,
  numPredict: number,
): Promise<One> {
  const messages = [{ role: "user", content: `Stream ${i}: tell me about GPU scheduling.` }];
  const t0 = performance.now();
  const res = proxied
    ? await post(dispatcher, base, "/api/chat", {
        model: ENGINE_MODEL,
        messages,
        ...(numPredict > 0 ? { options: { num_predict: numPredict } } : {}),
      })
    : await post(dispatcher, base, "/v1/chat/completions", {
        model: ENGINE_MODEL,
        messages,
        stream: true,
        stream_options: { include_usage: true },
        ...(numPredict > 0 ? { max_tokens: numPredict } : {}),
      });
  if (res.statusCode !== 200) throw new Error(`${base}: status ${res.statusCode}: ${await res.body.text()}`);
  if (proxied && res.headers["x-kubemoot-engine"] !== "vllm") throw new Error("not placed on the engine");
  let ttfbMs = 0;
  let tail = "";
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    if (ttfbMs === 0) ttfbMs = performance.now() - t0;
    tail = (tail + chunk.toString("utf8")).slice(-4096);
  }
  if (proxied) {
    const lines = tail.trim().split("\n");
    const last = JSON.parse(lines[lines.length - 1] ?? "{}") as { done?: boolean; eval_count?: number };
    if (!last.done) throw new Error(`proxied stream ended without its final chunk: ${JSON.stringify(last)}`);
    return { ttfbMs, tokens: last.eval_count ?? 0 };
  }
  const m = /"completion_tokens":\s*(\d+)/.exec(tail);
  if (!m || !tail.includes("[DONE]")) throw new Error("direct stream ended without usage and [DONE]");
  return { ttfbMs, tokens: Number(m[1]) };
}

async function round(
  dispatcher: Dispatcher,
  base: string,
  proxied: boolean,
  concurrency: number,
  seq: number,
  numPredict: number,
): Promise<StreamRound> {
  const t0 = performance.now();
  const all = await Promise.all(
    Array.from({ length: concurrency }, (_, k) =>
      streamOne(dispatcher, base, proxied, seq * 1000 + k, numPredict),
    ),
  );
  const tokens = all.reduce((n, r) => n + r.tokens, 0);
  return { ttfb: all.map((r) => r.ttfbMs), rate: tokens / ((performance.now() - t0) / 1000) };
}

/** Paired rounds of `concurrency` streams: direct engine vs translated through the proxy. */
export async function runTranslatedCase(
  dispatcher: Dispatcher,
  engine: string,
  proxy: string,
  concurrency: number,
  rounds: number,
  numPredict: number,
): Promise<StreamCase> {
  const { d, p } = await pairedRounds(
    rounds,
    (r) => round(dispatcher, engine, false, concurrency, r, numPredict),
    (r) => round(dispatcher, proxy, true, concurrency, r, numPredict),
  );
  return streamCase(d, p);
}

/** Warm-up: the engine loads its model, connections open. */
export async function warmTranslated(
  dispatcher: Dispatcher,
  engine: string,
  proxy: string,
  n: number,
): Promise<void> {
  await round(dispatcher, engine, false, 1, 0, n);
  await round(dispatcher, proxy, true, 4, 0, n);
  await round(dispatcher, engine, false, 4, 0, n);
}
