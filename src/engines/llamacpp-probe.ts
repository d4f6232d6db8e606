// llama.cpp's server (llama-server): GET /props gives the per-slot context (`n_ctx` of
// `default_generation_settings`) and `total_slots`; /v1/models the model id it answers to;
// /metrics (with --metrics) `llamacpp:requests_processing` and `llamacpp:requests_deferred`,
// and in older builds `llamacpp:kv_cache_usage_ratio`; /slots (unless --no-slots) which slots
// are processing, used when /metrics is off.
import type { EngineHttp } from "./engine-http.js";
import {
  answersTokenize,
  checkHealth,
  type EngineMetricNames,
  type EngineProbe,
  fetchMetrics,
  fetchOpenAiModels,
  obj,
  type ProbeMemo,
  positiveInt,
  readLoad,
} from "./engine-probe.js";

export const LLAMACPP_METRICS: EngineMetricNames = {
  running: ["llamacpp:requests_processing"],
  waiting: ["llamacpp:requests_deferred"],
  kvCacheUsage: ["llamacpp:kv_cache_usage_ratio"],
};

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
  const load = readLoad(samples, LLAMACPP_METRICS);
  load.running ??= await processingSlots(http);
  return {
    engine: "llamacpp",
    models: models.models,
    contextLengths,
    slots: positiveInt(p.total_slots),
    ...load,
    tokenize: await answersTokenize(http, memo, { content: "probe" }),
  };
}
