// A fixed-model personality's shape from the emulator's configuration: the one model, its
// context limit, slots, KV-cache capacity and the VRAM taken at start, with the engines'
// defaults (src/engines/README.md). Refuses, naming the option, what the engine would refuse
// to start with.
import { invalidArgument } from "../../errors/index.js";
import type { ModelSpec } from "../catalog.js";
import type { EngineVersion, ResolvedConfig } from "../config.js";
import type { FixedGpuConfig } from "./fixed-gpu.js";

export type PersonalityEngine = "vllm" | "llamacpp" | "sglang";

/**
 * Default concurrent sequences: vLLM's max_num_seqs (256); SGLang's max_running_requests (128 in
 * its documented run; the real default is derived from memory); llama.cpp's 4 slots (newer builds
 * start 4 when --parallel is not given).
 */
export const DEFAULT_SLOTS: Record<PersonalityEngine, number> = { vllm: 256, sglang: 128, llamacpp: 4 };

/** vLLM's gpu_memory_utilization default; SGLang's mem_fraction_static is of the same order. */
export const GPU_MEMORY_UTILIZATION = 0.9;

export const ENGINE_LABELS: Record<PersonalityEngine, string> = {
  vllm: "vLLM",
  llamacpp: "llama.cpp server",
  sglang: "SGLang",
};

export interface Personality {
  engine: PersonalityEngine;
  version: EngineVersion;
  spec: ModelSpec;
  gpu: FixedGpuConfig;
  /** SGLang reports context_length null in /get_server_info unless it was set. */
  contextLengthSet: boolean;
}

export function resolvePersonality(config: ResolvedConfig): Personality {
  const engine = config.engine as PersonalityEngine;
  const label = ENGINE_LABELS[engine];
  if (config.models.length !== 1) {
    throw invalidArgument(
      "models",
      `${label} serves exactly one model; got ${config.models.length} (${config.models.map((m) => m.name).join(", ") || "none"}): give one --model`,
    );
  }
  const spec = config.models[0] as ModelSpec;
  const vram = config.gpu.vramMiB;
  const weights = Math.ceil(spec.weightsMiB);
  const asked = config.contextLengthOption;
  if (asked > spec.contextLength && engine !== "llamacpp") {
    throw invalidArgument(
      "contextLength",
      `${label}: --context-length ${asked} is greater than ${spec.name}'s own context length ${spec.contextLength}`,
    );
  }
  const contextLength = asked > 0 ? asked : spec.contextLength;
  let kv: number;
  let used: number;
  if (engine === "llamacpp") {
    // llama.cpp allocates n_ctx tokens of cache, shared by its slots.
    kv = config.kvCacheTokens ?? contextLength;
    used = weights + Math.ceil(kv * spec.kvMiBPerToken);
  } else {
    // vLLM and SGLang take a fixed fraction of the card and give the rest to the KV cache.
    const budget = Math.floor(vram * GPU_MEMORY_UTILIZATION);
    if (weights >= budget) {
      throw invalidArgument(
        "vramMiB",
        `${label}: ${spec.name}'s weights (${weights} MiB) leave no room for a KV cache in ${budget} MiB (${GPU_MEMORY_UTILIZATION} of ${vram} MiB)`,
      );
    }
    kv = config.kvCacheTokens ?? Math.floor((budget - weights) / spec.kvMiBPerToken);
    used = config.kvCacheTokens === undefined ? budget : weights + Math.ceil(kv * spec.kvMiBPerToken);
  }
  if (used > vram) {
    throw invalidArgument(
      "vramMiB",
      `${label}: ${spec.name} with a KV cache of ${kv} tokens needs ${used} MiB, more than the GPU's ${vram} MiB`,
    );
  }
  if (contextLength > kv) {
    throw invalidArgument(
      "kvCacheTokens",
      `${label}: the context length (${contextLength}) is larger than the KV cache can hold (${kv} tokens); lower --context-length or raise --kv-cache-tokens`,
    );
  }
  return {
    engine,
    version: config.engineVersion,
    spec,
    contextLengthSet: asked > 0,
    gpu: {
      vramMiB: vram,
      usedMiB: used,
      slots: config.slots ?? DEFAULT_SLOTS[engine],
      kvCapacityTokens: kv,
      contextLength,
      tokensPerS: config.gpu.tokensPerS,
      promptTokensPerS: config.gpu.promptTokensPerS,
      maxQueue: config.gpu.maxQueue,
      promptCache: engine === "llamacpp" ? "slots" : "prefix",
    },
  };
}
