// The Ollama streaming case of bench proxy (docs/benchmarks.md): rounds of concurrent streaming
// /api/chat calls to one base URL (the emulator, or a sidecar's proxy in front of it), each
// stream's time to its first body byte and the round's tokens per second, and the paired rounds
// of two such URLs (the "direct" side and the "proxied" side) giving a case's fields.
import type { Dispatcher } from "undici";
import { percentile } from "../lib/report.js";
import { pairedRounds, type StreamCase, type StreamRound, streamCase } from "./paired.js";

/** The model the emulator serves and every stream asks for. */
export const MODEL = "qwen3:8b";

interface StreamResult {
  ttfbMs: number;
  tokens: number;
  /** X-Kubemoot-Queue-Wait-Ms of a proxied call (time it waited for a gpu-busy placement). */
  queueWaitMs: number;
}

/** One streaming /api/chat: time to the first body byte, and the tokens the engine reported. */
async function stream(
  dispatcher: Dispatcher,
  base: string,
  i: number,
  numPredict: number,
): Promise<StreamResult> {
  const url = new URL(base);
  const t0 = performance.now();
  const res = await dispatcher.request({
    origin: url.origin,
    path: "/api/chat",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: "user", content: `Stream ${i}: tell me about GPU scheduling.` }],
      ...(numPredict > 0 ? { options: { num_predict: numPredict } } : {}),
    }),
  });
  if (res.statusCode !== 200) throw new Error(`${base}: status ${res.statusCode}: ${await res.body.text()}`);
  let ttfbMs = 0;
  let tail = "";
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    if (ttfbMs === 0) ttfbMs = performance.now() - t0;
    tail = (tail + chunk.toString("utf8")).slice(-2048);
  }
  const lines = tail.trim().split("\n");
  const last = JSON.parse(lines[lines.length - 1] ?? "{}") as {
    done?: boolean;
    eval_count?: number;
    error?: string;
  };
  if (!last.done) throw new Error(`${base}: stream ended without its final chunk (${JSON.stringify(last)})`);
  return {
    ttfbMs,
    tokens: last.eval_count ?? 0,
    queueWaitMs: Number(res.headers["x-kubemoot-queue-wait-ms"] ?? 0),
  };
}

export interface Round extends StreamRound {
  wallMs: number;
  queueWaits: number[];
}

export async function round(
  dispatcher: Dispatcher,
  base: string,
  concurrency: number,
  seq: number,
  numPredict: number,
): Promise<Round> {
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from({ length: concurrency }, (_, k) => stream(dispatcher, base, seq * 1000 + k, numPredict)),
  );
  const tokens = results.reduce((n, r) => n + r.tokens, 0);
  const wallMs = performance.now() - t0;
  return {
    ttfb: results.map((r) => r.ttfbMs),
    rate: tokens / (wallMs / 1000),
    wallMs,
    queueWaits: results.map((r) => r.queueWaitMs),
  };
}

export interface CaseResult extends StreamCase {
  proxied_calls_that_waited: number;
  proxy_queue_wait_max_ms: number;
}

export async function runCase(
  dispatcher: Dispatcher,
  direct: string,
  proxied: string,
  concurrency: number,
  rounds: number,
  numPredict: number,
): Promise<CaseResult> {
  const { d, p } = await pairedRounds(
    rounds,
    (r) => round(dispatcher, direct, concurrency, r, numPredict),
    (r) => round(dispatcher, proxied, concurrency, r, numPredict),
  );
  if (process.env.BENCH_VERBOSE) {
    d.forEach((x, k) => {
      const y = p[k] as Round;
      process.stdout.write(
        `round ${k}: direct ${Math.round(x.rate)} tok/s ${Math.round(x.wallMs)} ms ttfb ${percentile(x.ttfb, 50).toFixed(1)} | ` +
          `proxy ${Math.round(y.rate)} tok/s ${Math.round(y.wallMs)} ms ttfb ${percentile(y.ttfb, 50).toFixed(1)} max ${Math.max(...y.ttfb).toFixed(1)}\n`,
      );
    });
  }
  return {
    ...streamCase(d, p),
    proxied_calls_that_waited: p.flatMap((x) => x.queueWaits).filter((w) => w > 0).length,
    proxy_queue_wait_max_ms: Math.round(Math.max(0, ...p.flatMap((x) => x.queueWaits))),
  };
}
