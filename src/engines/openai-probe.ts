// Any OpenAI-compatible server: GET /v1/models only. Nothing else is assumed of it (no
// metrics, no /tokenize); a `max_model_len` in the list is used when the server adds one.
import type { EngineHttp } from "./engine-http.js";
import { type EngineProbe, fetchOpenAiModels } from "./engine-probe.js";

export async function probeOpenAi(http: EngineHttp): Promise<EngineProbe> {
  return { engine: "openai", ...(await fetchOpenAiModels(http)), tokenize: false };
}
