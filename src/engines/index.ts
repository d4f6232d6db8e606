// Inference-server clients (Ollama first) over undici.
export {
  type DcgmFramebuffer,
  type DcgmReaderOptions,
  parseDcgmMetrics,
  readDcgmFramebuffer,
} from "./dcgm.js";
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
