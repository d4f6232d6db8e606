// proxy — the cost of the local proxy (docs/benchmarks.md). Streaming /api/chat straight to
// the emulator vs through the sidecar proxy, 1 and 32 concurrent streams. Three processes, as
// in a pod: the emulator, the sidecar (state + publisher + scheduler + proxy) and this client.
//
// Token rate: 5000 tokens/s per stream by default (about 100× what one GPU stream gives), so
// 32 streams ask the proxy to forward 160k tokens/s. Much higher and a 2-core machine
// saturates on the emulator's own token generation: the ratio then measures three processes
// sharing two cores more than the proxy.
//
// Baselines in the same run, for the TTFB target ("no more than one Place+Release"):
// Place+Release over the sidecar's API (Connect JSON, as an agent without the proxy would
// call it) and in-process (the scheduler alone); the sidecar also reports how long Place took
// inside the proxied calls.
//
// Embeddings (bench/proxy/embed.ts): 8 callers × 4 sequential /api/embed calls of 16 inputs,
// direct vs proxied in paired rounds: embed_*_inputs_per_s and embed_throughput_ratio
// (--embed-callers=N).
//
// Fields: direct_ttfb_p50_ms, proxy_ttfb_p50_ms, added_ttfb_p50_ms (1 stream), and
// direct_tokens_per_s, proxy_tokens_per_s, throughput_ratio (32 streams). Rounds run in
// pairs (direct and proxied back to back, alternating which goes first); the ratio and the
// added TTFB are medians over the pairs, so that the load swings of a shared machine cancel
// out. Per-case fields carry a _c1 / _c32 suffix. Options: --output-tokens=N (32 streams)
// --short-tokens=N (1 stream) --tokens-per-s=N --rounds=N --no-traced --no-real.
//
// The traced case (bench/proxy/traced.ts): a second sidecar tracing every call (100 % sampling,
// OTLP to a local sink) against the untraced one, on the Ollama path: traced_added_ttfb_p50_ms
// (1 stream) and traced_throughput_ratio (32 streams; target ≥ 0.95).
//
// The real-engine row (bench/proxy/real.ts): OpenAI chat on a real llama.cpp serving the
// generated ~100 MB model, direct vs through a sidecar process: real_added_ttfb_p50_ms (1
// stream) and real_throughput_ratio (2 streams on its 2 slots). BENCH_VERBOSE=1 prints every
// round; BENCH_CHILD_NODE_ARGS passes node flags (e.g. --cpu-prof) to the children.
import { Agent, type Dispatcher } from "undici";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";
import { type Child, startChild, stopChild } from "./children.js";
import { EMBED_MODEL, EMBED_PROMPT_TOKENS_PER_S, runEmbedCase, SATURATED_EMBED_MODEL } from "./embed.js";
import { MODEL, round, runCase } from "./ollama-case.js";
import { round2 } from "./paired.js";
import { REAL_MODEL, runRealEngineCase } from "./real.js";
import { runTracedCase, TRACED_TARGET } from "./traced.js";
import { ENGINE_MODEL, runTranslatedCase, warmTranslated } from "./translated.js";

const VRAM_MIB = 24_563;
const CONTEXT = 2048;
const PARALLEL = 32;

function arg(args: readonly string[], name: string, fallback: number): number {
  for (const a of args) {
    const m = new RegExp(`^--${name}=(\\d+(?:\\.\\d+)?)$`).exec(a);
    if (m) return Number(m[1]);
  }
  return fallback;
}

/** Sequential Place+Release over the sidecar's API (Connect JSON over HTTP/1.1) on the warm model. */
async function placeReleaseOverApi(dispatcher: Dispatcher, api: string, n: number): Promise<number[]> {
  const url = new URL(api);
  const call = async (method: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await dispatcher.request({
      origin: url.origin,
      path: `/kubemoot.scheduler.v1.SchedulerService/${method}`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${method}: status ${res.statusCode}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const placed = await call("Place", {
      agent: "bench/proxy",
      candidates: [{ model: MODEL, score: 100 }],
      promptChars: "70",
    });
    const ticketId = (placed.placement as { ticketId?: string } | undefined)?.ticketId;
    if (!ticketId) throw new Error(`Place did not place: ${JSON.stringify(placed)}`);
    await call("Release", { ticketId, outcome: "CALL_OUTCOME_SUCCEEDED", latencyMs: "1" });
    ms.push(performance.now() - t0);
  }
  return ms.slice(Math.floor(n / 10));
}

export async function run(args: string[]): Promise<void> {
  const outputTokens = arg(args, "output-tokens", 5000);
  const shortTokens = arg(args, "short-tokens", 500);
  const tokensPerS = arg(args, "tokens-per-s", 5000);
  const rounds = arg(args, "rounds", 8);
  const started = performance.now();
  process.stdout.write(
    `seed none; emulator: ${MODEL}, ${tokensPerS} tokens/s per stream, ${PARALLEL} slots; ` +
      `1 stream: ${shortTokens}-token answers, ${rounds * 5} rounds; 32 streams: ${outputTokens}-token answers, ` +
      `${rounds} rounds\n`,
  );
  // Both emulators run at the same speeds; only the models they hold differ.
  const startEmulator = (models: Record<string, number | { onDiskMiB: number; promptTokensPerS: number }>) =>
    startChild("emulator-child.js", {
      vramMiB: VRAM_MIB,
      models,
      numParallel: PARALLEL,
      contextLength: CONTEXT,
      timeScale: 1,
      tokensPerS,
      promptTokensPerS: 1_000_000,
      outputTokens,
      loadMiBPerS: 1_000_000,
    });
  const emulator = await startEmulator({
    [MODEL]: 4900,
    [EMBED_MODEL]: { onDiskMiB: 262, promptTokensPerS: EMBED_PROMPT_TOKENS_PER_S },
    [SATURATED_EMBED_MODEL]: 262,
  });
  // The OpenAI-only engine of the translated case: a second emulator.
  const engine = await startEmulator({ [ENGINE_MODEL]: 2600 });
  let sidecar: Child | undefined;
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  // The traced case starts a second sidecar with the same arguments (and a trace endpoint).
  const sidecarArgs = {
    emulatorUrl: emulator.url,
    vramMiB: VRAM_MIB,
    maxParallel: PARALLEL,
    contextLength: CONTEXT,
    model: MODEL,
    engineUrl: engine.url,
    engineModel: ENGINE_MODEL,
  };
  try {
    sidecar = await startChild("proxy-child.js", sidecarArgs);
    // Warm-up: load the model (the proxy pins num_ctx to the same context), open connections.
    await round(dispatcher, sidecar.url, 1, 0, shortTokens);
    await round(dispatcher, emulator.url, 4, 0, shortTokens);
    await round(dispatcher, sidecar.url, 4, 0, shortTokens);

    const c1 = await runCase(dispatcher, emulator.url, sidecar.url, 1, rounds * 5, shortTokens);
    const c32 = await runCase(dispatcher, emulator.url, sidecar.url, 32, rounds, 0);
    await warmTranslated(dispatcher, engine.url, sidecar.url, shortTokens);
    const t1 = await runTranslatedCase(dispatcher, engine.url, sidecar.url, 1, rounds * 5, shortTokens);
    const t32 = await runTranslatedCase(dispatcher, engine.url, sidecar.url, 32, rounds, 0);
    const embed = await runEmbedCase(
      dispatcher,
      EMBED_MODEL,
      emulator.url,
      sidecar.url,
      rounds,
      arg(args, "embed-callers", 8),
    );
    const saturated = await runEmbedCase(
      dispatcher,
      SATURATED_EMBED_MODEL,
      emulator.url,
      sidecar.url,
      rounds,
      arg(args, "embed-callers", 8),
    );

    // Tracing every call: a traced sidecar against this one (traced.ts); --no-traced leaves it out.
    const traced = args.includes("--no-traced")
      ? undefined
      : await runTracedCase(dispatcher, sidecar.url, sidecarArgs, rounds, shortTokens);

    // The real engine (llama.cpp on the CPU, its own sidecar): --no-real leaves it out.
    const real = args.includes("--no-real") ? undefined : await runRealEngineCase(dispatcher, rounds);

    // Baselines for the TTFB target: in-process Place+Release (the scheduler's own cost; the
    // sidecar also reports how long Place took inside the proxied calls above), then
    // Place+Release as an agent would call it without the proxy (over the API).
    (sidecar.proc.stdin as NodeJS.WritableStream).write("MEASURE 400\n");
    const placeLine = await sidecar.lines.next();
    const pm = /^PLACE (.+)$/.exec(String(placeLine.value ?? ""));
    const inproc = pm
      ? (JSON.parse(pm[1] as string) as {
          p50_ms: number;
          p99_ms: number;
          proxied_place_p50_ms: number;
          proxied_place_p99_ms: number;
          proxied_place_max_ms: number;
        })
      : undefined;
    const apiMs = sidecar.url2 ? await placeReleaseOverApi(dispatcher, sidecar.url2, 400) : [];
    const apiP50 = apiMs.length > 0 ? percentile(apiMs, 50) : Number.NaN;

    const suffixed = (c: object, s: string) =>
      Object.fromEntries(Object.entries(c).map(([k, v]) => [`${k}_${s}`, v]));
    const result = {
      ...runInfo(null),
      model: MODEL,
      tokens_per_s_per_stream: tokensPerS,
      output_tokens_c1: shortTokens,
      output_tokens_c32: outputTokens,
      direct_ttfb_p50_ms: c1.direct_ttfb_p50_ms,
      proxy_ttfb_p50_ms: c1.proxy_ttfb_p50_ms,
      added_ttfb_p50_ms: c1.added_ttfb_p50_ms,
      direct_tokens_per_s: c32.direct_tokens_per_s,
      proxy_tokens_per_s: c32.proxy_tokens_per_s,
      throughput_ratio: c32.throughput_ratio,
      place_release_api_p50_ms: round2(apiP50),
      place_release_api_p99_ms: apiMs.length > 0 ? round2(percentile(apiMs, 99)) : null,
      place_release_inproc_p50_ms: inproc ? round2(inproc.p50_ms) : null,
      place_release_inproc_p99_ms: inproc ? round2(inproc.p99_ms) : null,
      // Place as the proxy ran it during the streams (all cases): the placement share of TTFB.
      proxied_place_p50_ms: inproc ? round2(inproc.proxied_place_p50_ms) : null,
      proxied_place_p99_ms: inproc ? round2(inproc.proxied_place_p99_ms) : null,
      proxied_place_max_ms: inproc ? round2(inproc.proxied_place_max_ms) : null,
      target_throughput_ratio_met: c32.throughput_ratio >= 0.9,
      embed_prompt_tokens_per_s: EMBED_PROMPT_TOKENS_PER_S,
      ...embed,
      target_embed_throughput_ratio_met: embed.embed_throughput_ratio >= 0.9,
      // The same at the emulator's CPU limit (see embed.ts): not the target's measure.
      ...suffixed(saturated, "saturated"),
      target_added_ttfb_met: Number.isFinite(apiP50) ? c1.added_ttfb_p50_ms <= apiP50 : null,
      // Ollama-API chat translated onto an OpenAI-only engine, vs that engine's route direct.
      translated_added_ttfb_p50_ms: t1.added_ttfb_p50_ms,
      translated_throughput_ratio: t32.throughput_ratio,
      target_translated_throughput_ratio_met: t32.throughput_ratio >= 0.9,
      ...suffixed(t1, "translated_c1"),
      ...suffixed(t32, "translated_c32"),
      // Every call traced (100 % sampling, exported to a local sink) vs untraced: two sidecars.
      ...(traced
        ? {
            traced_added_ttfb_p50_ms: traced.c1.added_ttfb_p50_ms,
            traced_throughput_ratio: traced.c32.throughput_ratio,
            traced_throughput_ratio_min: traced.c32.throughput_ratio_min,
            traced_throughput_ratio_max: traced.c32.throughput_ratio_max,
            traced_exports: traced.exports,
            traced_spans_exported_bytes: traced.bytes,
            target_traced_throughput_ratio_met: traced.c32.throughput_ratio >= TRACED_TARGET,
            ...suffixed(traced.c1, "traced_c1"),
            ...suffixed(traced.c32, "traced_c32"),
          }
        : {}),
      // OpenAI chat on a real llama.cpp (the generated bench model), direct vs through a sidecar.
      ...(real
        ? {
            real_model: REAL_MODEL,
            real_model_bytes: real.modelBytes,
            real_added_ttfb_p50_ms: real.c1.added_ttfb_p50_ms,
            real_throughput_ratio: real.c2.throughput_ratio,
            real_proxied_calls_that_waited: real.proxiedCallsThatWaited,
            real_proxied_calls: real.proxiedCalls,
            ...suffixed(real.c1, "real_c1"),
            ...suffixed(real.c2, "real_c2"),
          }
        : {}),
      ...suffixed(c1, "c1"),
      ...suffixed(c32, "c32"),
    };
    const file = writeResult("proxy", result);
    const rows = [
      { path: "ollama", streams: 1, answer_tokens: shortTokens, ...c1 },
      { path: "ollama", streams: 32, answer_tokens: outputTokens, ...c32 },
      { path: "translated", streams: 1, answer_tokens: shortTokens, ...t1 },
      { path: "translated", streams: 32, answer_tokens: outputTokens, ...t32 },
      ...(traced
        ? [
            { path: "traced vs untraced", streams: 1, answer_tokens: shortTokens, ...traced.c1 },
            { path: "traced vs untraced", streams: 32, answer_tokens: outputTokens, ...traced.c32 },
          ]
        : []),
      ...(real
        ? [
            { path: "real llama.cpp", streams: 1, answer_tokens: 32, ...real.c1 },
            { path: "real llama.cpp", streams: 2, answer_tokens: 192, ...real.c2 },
          ]
        : []),
    ];
    process.stdout.write(`${markdownTable(rows)}\n\n`);
    process.stdout.write(
      `Place+Release p50 over the API ${round2(apiP50)} ms (in-process ${inproc ? round2(inproc.p50_ms) : "?"} ms). ` +
        `Targets: throughput_ratio ≥ 0.9 (32 streams): ${result.target_throughput_ratio_met ? "met" : "NOT met"}; ` +
        `added TTFB p50 (1 stream) ≤ one Place+Release over the API: ${result.target_added_ttfb_met ? "met" : "NOT met"}; ` +
        `translated (Ollama API onto an OpenAI-only engine) ratio ${t32.throughput_ratio} ≥ 0.9: ${result.target_translated_throughput_ratio_met ? "met" : "NOT met"}, added TTFB p50 ${t1.added_ttfb_p50_ms} ms; ` +
        `embeddings ${embed.embed_proxy_inputs_per_s} vs ${embed.embed_direct_inputs_per_s} inputs/s, ratio ${embed.embed_throughput_ratio} ≥ 0.9: ${result.target_embed_throughput_ratio_met ? "met" : "NOT met"} ` +
        `(at the emulator's CPU limit: ${saturated.embed_proxy_inputs_per_s} vs ${saturated.embed_direct_inputs_per_s}, ratio ${saturated.embed_throughput_ratio}).\n` +
        (traced
          ? `Tracing every call (100 % sampling; ${traced.exports} exports, ${traced.bytes} bytes to a local OTLP sink): ` +
            `traced ÷ untraced tokens/s ${traced.c32.throughput_ratio} (${traced.c32.throughput_ratio_min}–${traced.c32.throughput_ratio_max}, 32 streams) ` +
            `≥ ${TRACED_TARGET}: ${result.target_traced_throughput_ratio_met ? "met" : "NOT met"}; added TTFB p50 ${traced.c1.added_ttfb_p50_ms} ms (1 stream). ` +
            "In the table's traced rows, direct_ is the untraced proxy and proxy_ the traced one.\n"
          : "") +
        "Tokens/s: medians of per-round rates over whole rounds (placement and TTFB included); " +
        "throughput_ratio and added TTFB: medians over paired rounds (min/max in the JSON); " +
        "TTFB = first body byte.\n",
    );
    process.stdout.write(`wrote ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    await dispatcher.close().catch(() => undefined);
    if (sidecar) await stopChild(sidecar);
    await stopChild(emulator);
    await stopChild(engine);
  }
}
