// The Ollama-API emulator over one simulated GPU (docs/rules/ollama.md). Public API.
export type { EmulatorModelState, EmulatorState } from "./admin-api.js";
export {
  footprintMiB,
  kvSlabMiB,
  type ModelConfig,
  type ModelSpec,
  parseModelFlag,
  resolveModel,
} from "./catalog.js";
export { type Clock, ManualClock, ScaledClock, type TimerHandle } from "./clock.js";
export {
  DEFAULTS,
  EMULATOR_ENGINES,
  type EmulatorEngine,
  type EmulatorOptions,
  type EngineVersion,
  loadConfigFile,
  modelList,
  parseListen,
  type ResolvedConfig,
  resolveConfig,
} from "./config.js";
export { FAULT_KINDS, type FaultKind, type FaultRule, parseFaultFlag, validateFaultRules } from "./faults.js";
export { parseGoDuration, parseKeepAlive } from "./go-duration.js";
export { OllamaGpu } from "./gpu.js";
export type { GpuConfig, GpuSnapshot, JobObserver, JobResult, JobSpec, RunnerSnapshot } from "./gpu-types.js";
export { EMPTY_CHAIN, extendChain, type PromptChain, type PromptPart, reusable } from "./prompt-cache.js";
export { type EmulatorHandle, startEmulator } from "./server.js";
export {
  CHARS_PER_TOKEN,
  chatPromptTokens,
  countTextTokens,
  generatePromptTokens,
  truncateChat,
  truncateTokens,
} from "./tokenizer.js";
