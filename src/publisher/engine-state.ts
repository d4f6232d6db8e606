// Pure conversion of a fixed-model engine's probe (src/engines: vLLM, llama.cpp, SGLang, any
// OpenAI-compatible server) into the `kubemoot_provider_state` value, read as
// docs/rules/engines.md says: loadedModels = the models it serves, maxParallel = its slots,
// activeCount / queueDepth = its running / waiting requests, contextLength and
// loadedModelContextLengths = its context limit, availableModelFootprintsMiB = {} (it loads
// nothing), plus `engine`, `kvCacheUsage` (when known) and `tokenize` (when true).
//
// Slots: the engine's own count (llama.cpp total_slots, SGLang max_running_requests), else the
// configured one, else for vLLM its default max_num_seqs (256; vLLM publishes no count), else 1.
// Footprint: the first model is charged the card's VRAM, or the process's resident memory where
// a llama.cpp server exports it (the project's CPU engine): host RAM stands for VRAM there.
import type { ProviderState } from "../core/index.js";
import type { EngineProbe } from "../engines/index.js";
import { count, formatProbedAt, type ProviderProbeConfig } from "./provider-state.js";

export const VLLM_DEFAULT_MAX_NUM_SEQS = 256;

/**
 * A fixed-model engine takes its card whole at start (weights, then the KV cache in what is
 * left), and no engine tells a footprint per model: the first model is charged the card's VRAM,
 * any other (LoRA adapters, aliases) nothing, so that nothing else ever looks as if it fitted.
 */
function footprints(models: readonly string[], totalMiB: number): Record<string, number> {
  return Object.fromEntries(models.map((m, i) => [m, i === 0 ? totalMiB : 0]));
}

export function toEngineProviderState(
  config: ProviderProbeConfig,
  probe: EngineProbe,
  dcgm: { totalMiB: number } | undefined,
  probedAt: Date | number | string,
): ProviderState {
  const loadedModelContextLengths: Record<string, number> = {};
  for (const m of probe.models) {
    const ctx = count(probe.contextLengths[m]);
    if (ctx > 0) loadedModelContextLengths[m] = ctx;
  }
  const contexts = Object.values(loadedModelContextLengths);
  const dcgmTotal = count(dcgm?.totalMiB);
  const totalVramMiB = dcgmTotal > 0 ? dcgmTotal : count(config.totalVramMiB);
  const slots =
    count(probe.slots) ||
    count(config.maxParallel) ||
    (probe.engine === "vllm" ? VLLM_DEFAULT_MAX_NUM_SEQS : 1);
  return {
    name: config.name,
    endpoint: config.endpoint,
    maxParallel: slots,
    activeCount: count(probe.running),
    queueDepth: count(probe.waiting),
    loadedModels: [...probe.models],
    ready: true,
    lastProbedAt: formatProbedAt(probedAt),
    totalVramMiB,
    // A CPU engine that tells its resident memory is charged that, not the card.
    loadedModelFootprintsMiB: footprints(probe.models, count(probe.residentMiB) || totalVramMiB),
    availableModelFootprintsMiB: {},
    contextLength: contexts.length > 0 ? Math.max(...contexts) : count(config.contextLength),
    loadedModelContextLengths,
    engine: probe.engine,
    ...(probe.kvCacheUsage !== undefined ? { kvCacheUsage: probe.kvCacheUsage } : {}),
    ...(probe.tokenize ? { tokenize: true } : {}),
  };
}

/** The state of a fixed-model engine that cannot be probed (or is the wrong engine): the last
 * good value, or an empty one, with ready=false. */
export function unreadyEngineState(
  config: ProviderProbeConfig,
  engine: EngineProbe["engine"],
  last: ProviderState | undefined,
  probedAt: Date | number | string,
): ProviderState {
  const base =
    last ??
    toEngineProviderState(
      config,
      { engine, models: [], contextLengths: {}, tokenize: false },
      undefined,
      probedAt,
    );
  return {
    ...base,
    name: config.name,
    endpoint: config.endpoint,
    engine,
    ready: false,
    lastProbedAt: formatProbedAt(probedAt),
  };
}
