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

/** The answer of the first of a route's names (SGLang renamed several) that is an object `ok` accepts. */
async function firstObject(
  http: EngineHttp,
  paths: readonly string[],
  ok: (o: Record<string, unknown>) => boolean = () => true,
): Promise<Record<string, unknown> | undefined> {
  for (const path of paths) {
    const a = await http.get(path);
    const o = a.status === 200 ? obj(a.json) : undefined;
    if (o && ok(o)) return o;
  }
  return undefined;
}

export async function probeSglang(http: EngineHttp, memo: ProbeMemo): Promise<EngineProbe> {
  const info = await firstObject(
    http,
    ["/get_model_info", "/model_info"],
    (o) => typeof o.model_path === "string",
  );
  if (!info) {
    throw http.fail("/get_model_info", undefined, "no SGLang /get_model_info or /model_info");
  }
  const [models, server, samples] = await Promise.all([
    fetchOpenAiModels(http),
    firstObject(http, ["/server_info", "/get_server_info"]).then((o) => o ?? {}),
    fetchMetrics(http),
    checkHealth(http),
  ]);
  const ctx = positiveInt(server.context_length);
  const contextLengths: Record<string, number> = { ...models.contextLengths };
  if (ctx !== undefined) for (const m of models.models) contextLengths[m] ??= ctx;
  return {
    engine: "sglang",
    models: models.models,
    contextLengths,
    slots: positiveInt(server.max_running_requests),
    ...readLoad(samples, SGLANG_METRICS),
    tokenize: await answersTokenize(http, memo, { model: models.models[0], prompt: "probe" }),
  };
}
