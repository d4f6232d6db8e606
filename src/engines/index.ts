// Inference-server clients (Ollama first) and the probes of the other engines, over undici; and
// the generated GGUF model a real llama.cpp serves (gguf/).
export { readDcgmFramebuffer } from "./dcgm.js";
export { EngineHttp } from "./engine-http.js";
export { EngineMismatchError, type EngineProbe, isEngineMismatch } from "./engine-probe.js";
export { EngineProber, mismatchOr } from "./engine-prober.js";
export { GGUF_PRESETS, type GgufPreset, writeLlamaGguf } from "./gguf/index.js";
export { LLAMACPP_DEFAULT_PARAMS, llamacppOllamaStyleModel } from "./llamacpp-wire.js";
export { OllamaClient } from "./ollama-client.js";
export {
  BYTES_PER_MIB,
  modelNotFoundMessage,
  normalizeModelName,
  OLLAMA_DEFAULT_KEEP_ALIVE_MS,
  OLLAMA_DEFAULT_MAX_LOADED_MODELS,
  OLLAMA_DEFAULT_MAX_QUEUE,
  OLLAMA_DEFAULT_NUM_KEEP,
  OLLAMA_DEFAULT_NUM_PARALLEL,
  OLLAMA_MAX_QUEUE_MESSAGE,
  ollamaDefaultContextLength,
} from "./ollama-defaults.js";
export type { OllamaModelDetails, OllamaPsModel, OllamaShowResponse, OllamaTagModel } from "./ollama-wire.js";
export { type PromSample, readPromSamples, sumFirst } from "./prom-text.js";
