// vLLM: one model per server (plus LoRA adapters, listed beside it by /v1/models). GET /v1/models
// gives the models and `max_model_len`; /metrics the running and waiting requests and the KV
// cache in use, under the name of the vLLM version at hand (`vllm:kv_cache_usage_perc` since
// the V1 engine, `vllm:gpu_cache_usage_perc` before; both are fractions 0..1 despite the name).
// vLLM publishes no slot count (max_num_seqs) on any route: slots come from configuration.
import type { EngineHttp } from "./engine-http.js";
import {
  answersTokenize,
  checkHealth,
  type EngineMetricNames,
  EngineMismatchError,
  type EngineProbe,
  engineOfMetrics,
  fetchMetrics,
  fetchOpenAiModels,
  type ProbeMemo,
  readLoad,
} from "./engine-probe.js";

export const VLLM_METRICS: EngineMetricNames = {
  running: ["vllm:num_requests_running"],
  waiting: ["vllm:num_requests_waiting"],
  kvCacheUsage: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
};

export async function probeVllm(http: EngineHttp, memo: ProbeMemo): Promise<EngineProbe> {
  const [models, samples] = await Promise.all([
    fetchOpenAiModels(http),
    fetchMetrics(http),
    checkHealth(http),
  ]);
  // vLLM's served model always carries max_model_len; a list without it is another server's
  // OpenAI-compatible route (Ollama has one too).
  if (Object.keys(models.contextLengths).length === 0) {
    throw http.fail("/v1/models", undefined, "no max_model_len in /v1/models: not a vLLM model list");
  }
  const other = engineOfMetrics(samples);
  if (other !== undefined && other !== "vllm") throw new EngineMismatchError(http.baseUrl, "vllm", other);
  return {
    engine: "vllm",
    ...models,
    ...readLoad(samples, VLLM_METRICS),
    tokenize: await answersTokenize(http, memo, { model: models.models[0], prompt: "probe" }),
  };
}
