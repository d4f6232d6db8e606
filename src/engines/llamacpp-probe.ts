// llama.cpp's server (llama-server): GET /props gives the per-slot context (`n_ctx` of
// `default_generation_settings`) and `total_slots`; /v1/models the model id it answers to;
// /metrics (with --metrics) `llamacpp:requests_processing` and `llamacpp:requests_deferred`,
// and in older builds `llamacpp:kv_cache_usage_ratio`; /slots (unless --no-slots) which slots
// are processing, used when /metrics is off. A server of several models (router mode, or the
// project's own engine) answers /props?model=ID per model. A server that exports the process's
// resident memory (the project's CPU engine, docs/rules/engines.md "A real llama.cpp engine")
// has it published as its footprint.
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

/** The process's resident memory (MiB) where /metrics exports it (prom-client, Prometheus clients). */
export const RESIDENT_MEMORY_METRIC = "process_resident_memory_bytes";

/** Per-slot context of each model: /props for one model, /props?model=ID for each of several. */
async function contextLengths(http: EngineHttp, models: readonly string[], nCtx: number | undefined) {
  const out: Record<string, number> = {};
  if (models.length <= 1) {
    if (nCtx !== undefined) for (const m of models) out[m] = nCtx;
    return out;
  }
  await Promise.all(
    models.map(async (m) => {
      const a = await http.get(`/props?model=${encodeURIComponent(m)}`);
      const own =
        a.status === 200 ? positiveInt(obj(obj(a.json)?.default_generation_settings)?.n_ctx) : undefined;
      const ctx = own ?? nCtx;
      if (ctx !== undefined) out[m] = ctx;
    }),
  );
  return out;
}

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
  const load = readLoad(samples, LLAMACPP_METRICS);
  load.running ??= await processingSlots(http);
  const resident = samples.find((x) => x.name === RESIDENT_MEMORY_METRIC)?.value;
  return {
    engine: "llamacpp",
    models: models.models,
    contextLengths: await contextLengths(http, models.models, positiveInt(settings?.n_ctx)),
    slots: positiveInt(p.total_slots),
    ...load,
    ...(resident !== undefined && Number.isFinite(resident) && resident > 0
      ? { residentMiB: Math.ceil(resident / 1048576) }
      : {}),
    // The model named: a server of several models routes by it; one of a single model ignores it.
    tokenize: await answersTokenize(http, memo, { content: "probe", model: models.models[0] }),
  };
}
