// Provider state values (kubemoot_provider_state): written in Kubemoot's field order, read
// tolerantly (missing fields → zero values, unknown fields ignored, non-objects skipped).

import { isEngine, type ProviderState } from "../core/index.js";
import { bool, instantMs, isObject, num, numberMap, str, strings } from "./json-fields.js";

export function providerStateJson(s: ProviderState): Record<string, unknown> {
  return {
    name: s.name,
    endpoint: s.endpoint,
    maxParallel: s.maxParallel,
    activeCount: s.activeCount,
    queueDepth: s.queueDepth,
    loadedModels: s.loadedModels,
    ready: s.ready,
    lastProbedAt: s.lastProbedAt,
    totalVramMiB: s.totalVramMiB,
    loadedModelFootprintsMiB: s.loadedModelFootprintsMiB,
    availableModelFootprintsMiB: s.availableModelFootprintsMiB,
    contextLength: s.contextLength,
    loadedModelContextLengths: s.loadedModelContextLengths,
    ...(s.maxLoadedModels !== undefined && s.maxLoadedModels > 0
      ? { maxLoadedModels: s.maxLoadedModels }
      : {}),
    // Our extensions, written only when they say something, so an Ollama provider's value is
    // byte for byte what Kubemoot's operator writes.
    ...(s.engine !== undefined && s.engine !== "ollama" ? { engine: s.engine } : {}),
    ...(s.kvCacheUsage !== undefined ? { kvCacheUsage: s.kvCacheUsage } : {}),
    ...(s.tokenize === true ? { tokenize: true } : {}),
    ...(s.singleSlotModels !== undefined && s.singleSlotModels.length > 0
      ? { singleSlotModels: s.singleSlotModels }
      : {}),
  };
}

/**
 * Reads a provider state; `key` names the provider when the value does not. maxParallel is
 * at least 1 (the field's documented range): a missing value means Ollama's default of one slot.
 */
export function parseProviderState(raw: unknown, key: string): ProviderState | undefined {
  if (!isObject(raw)) return undefined;
  return {
    name: str(raw.name) || key,
    endpoint: str(raw.endpoint),
    maxParallel: Math.max(1, Math.floor(num(raw.maxParallel))),
    activeCount: num(raw.activeCount),
    queueDepth: num(raw.queueDepth),
    loadedModels: strings(raw.loadedModels),
    ready: bool(raw.ready),
    lastProbedAt: str(raw.lastProbedAt),
    totalVramMiB: num(raw.totalVramMiB),
    loadedModelFootprintsMiB: numberMap(raw.loadedModelFootprintsMiB),
    availableModelFootprintsMiB: numberMap(raw.availableModelFootprintsMiB),
    contextLength: num(raw.contextLength),
    loadedModelContextLengths: numberMap(raw.loadedModelContextLengths),
    ...(num(raw.maxLoadedModels) > 0 ? { maxLoadedModels: Math.floor(num(raw.maxLoadedModels)) } : {}),
    ...engineField(raw.engine),
    ...(typeof raw.kvCacheUsage === "number" && Number.isFinite(raw.kvCacheUsage)
      ? { kvCacheUsage: Math.min(1, Math.max(0, raw.kvCacheUsage)) }
      : {}),
    ...(raw.tokenize === true ? { tokenize: true } : {}),
    ...singleSlotField(raw.singleSlotModels),
  };
}

function singleSlotField(v: unknown): Pick<ProviderState, "singleSlotModels"> {
  const models = strings(v);
  return models.length > 0 ? { singleSlotModels: models } : {};
}

/** Stale: lastProbedAt parses and is older than `staleMs`. Empty or unparsable is kept. */
export function isStale(s: ProviderState, nowMs: number, staleMs: number): boolean {
  const t = instantMs(s.lastProbedAt);
  return t !== undefined && nowMs - t > staleMs;
}

/**
 * An engine this reader does not know (written by a newer operator) is read as "openai": served
 * over OpenAI's routes and sent no load or unload, the safe reading of a server we cannot drive.
 */
function engineField(v: unknown): Pick<ProviderState, "engine"> {
  if (v === undefined || v === null || v === "" || v === "ollama") return {};
  return { engine: isEngine(v) ? v : "openai" };
}
