// Inference-server clients (Ollama first) and the probes of the other engines, over undici.
export {
  type DcgmFramebuffer,
  type DcgmReaderOptions,
  parseDcgmMetrics,
  readDcgmFramebuffer,
} from "./dcgm.js";
export { EngineHttp, type EngineHttpOptions } from "./engine-http.js";
export {
  detectEngine,
  EngineMismatchError,
  type EngineProbe,
  type FixedEngine,
  isEngineMismatch,
} from "./engine-probe.js";
export { EngineProber, mismatchOr } from "./engine-prober.js";
export { EngineError, type EngineErrorKind, isEngineError } from "./errors.js";
export {
  type CallSignal,
  type LoadOptions,
  OllamaClient,
  type OllamaClientOptions,
} from "./ollama-client.js";
export {
  BYTES_PER_MIB,
  modelNotFoundMessage,
  normalizeModelName,
  OLLAMA_DEFAULT_KEEP_ALIVE_MS,
  OLLAMA_DEFAULT_MAX_LOADED_MODELS,
  OLLAMA_DEFAULT_MAX_QUEUE,
  OLLAMA_DEFAULT_NUM_PARALLEL,
  OLLAMA_MAX_QUEUE_MESSAGE,
  ollamaDefaultContextLength,
} from "./ollama-defaults.js";
export type * from "./ollama-wire.js";
export { type PromSample, readPromSamples, sumFirst } from "./prom-text.js";
