// SGLang: GET /get_model_info (newer: /model_info) names the model (`model_path`); the server
// info (/get_server_info, newer: /server_info) gives `max_running_requests` and, where set, `context_length`;
// /v1/models adds `max_model_len`; /metrics (with --enable-metrics) `sglang:num_running_reqs`,
// `sglang:num_queue_reqs` and `sglang:token_usage` (the KV pool's fraction in use).
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

export const SGLANG_METRICS: EngineMetricNames = {
  running: ["sglang:num_running_reqs"],
  waiting: ["sglang:num_queue_reqs"],
  kvCacheUsage: ["sglang:token_usage"],
};

async function serverInfo(http: EngineHttp): Promise<Record<string, unknown>> {
  for (const path of ["/server_info", "/get_server_info"]) {
    const a = await http.get(path);
    const info = a.status === 200 ? obj(a.json) : undefined;
    if (info) return info;
  }
  return {};
}

/** SGLang's model info, under either of its names; undefined when neither answers. */
export async function sglangModelInfo(http: EngineHttp): Promise<Record<string, unknown> | undefined> {
  for (const path of ["/get_model_info", "/model_info"]) {
    const a = await http.get(path);
    const info = a.status === 200 ? obj(a.json) : undefined;
    if (typeof info?.model_path === "string") return info;
  }
  return undefined;
}

export async function probeSglang(http: EngineHttp, memo: ProbeMemo): Promise<EngineProbe> {
  if (!(await sglangModelInfo(http))) {
    throw http.fail("/get_model_info", undefined, "no SGLang /get_model_info or /model_info");
  }
  const [models, server, samples] = await Promise.all([
    fetchOpenAiModels(http),
    serverInfo(http),
    fetchMetrics(http),
    checkHealth(http),
  ]);
  const ctx = positiveInt(server.context_length);
  const contextLengths: Record<string, number> = { ...models.contextLengths };
  if (ctx !== undefined) for (const m of models.models) contextLengths[m] ??= ctx;
  memo.tokenize ??= await answersTokenize(http, { model: models.models[0], prompt: "probe" });
  return {
    engine: "sglang",
    models: models.models,
    contextLengths,
    slots: positiveInt(server.max_running_requests),
    ...readLoad(samples, SGLANG_METRICS),
    tokenize: memo.tokenize,
  };
}
