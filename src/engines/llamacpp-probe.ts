// llama.cpp's server (llama-server): GET /props gives the per-slot context (`n_ctx` of
// `default_generation_settings`) and `total_slots`; /v1/models the model id it answers to;
// /metrics (with --metrics) `llamacpp:requests_processing` and `llamacpp:requests_deferred`,
// and in older builds `llamacpp:kv_cache_usage_ratio`; /slots (unless --no-slots) which slots
// are processing, used when /metrics is off.
import type { EngineHttp } from "./engine-http.js";
import {
  answersTokenize,
  checkHealth,
  type EngineProbe,
  fetchMetrics,
  fetchOpenAiModels,
  fraction,
  gauge,
  obj,
  positiveInt,
} from "./engine-probe.js";
import { meanFirst, sumFirst } from "./prom-text.js";
import type { ProbeMemo } from "./vllm-probe.js";

export const LLAMACPP_METRICS = {
  running: ["llamacpp:requests_processing"],
  waiting: ["llamacpp:requests_deferred"],
  kvCacheUsage: ["llamacpp:kv_cache_usage_ratio"],
} as const;

/** Slots processing now, from GET /slots (an array of slots with `is_processing`). */
async function processingSlots(http: EngineHttp): Promise<number | undefined> {
  const a = await http.get("/slots");
  if (a.status !== 200 || !Array.isArray(a.json)) return undefined;
  return a.json.filter((s) => obj(s)?.is_processing === true).length;
}

export async function probeLlamaCpp(http: EngineHttp, memo: ProbeMemo): Promise<EngineProbe> {
  const props = await http.get("/props");
  const p = props.status === 200 ? obj(props.json) : undefined;
  const settings = obj(p?.default_generation_settings);
  if (!p || (!settings && p.total_slots === undefined)) {
    throw http.fail("/props", props, `no llama.cpp /props (status ${props.status})`);
  }
  const [models, samples] = await Promise.all([
    fetchOpenAiModels(http),
    fetchMetrics(http),
    checkHealth(http),
  ]);
  const nCtx = positiveInt(settings?.n_ctx);
  const contextLengths: Record<string, number> = {};
  if (nCtx !== undefined) for (const m of models.models) contextLengths[m] = nCtx;
  let running = gauge(sumFirst(samples, LLAMACPP_METRICS.running));
  if (running === undefined) running = await processingSlots(http);
  memo.tokenize ??= await answersTokenize(http, { content: "probe" });
  return {
    engine: "llamacpp",
    models: models.models,
    contextLengths,
    slots: positiveInt(p.total_slots),
    running,
    waiting: gauge(sumFirst(samples, LLAMACPP_METRICS.waiting)),
    kvCacheUsage: fraction(meanFirst(samples, LLAMACPP_METRICS.kvCacheUsage)),
    tokenize: memo.tokenize,
  };
}
