// Pure conversion of what an Ollama provider answers (/api/ps, /api/tags, /api/version and,
// when configured, a DCGM exporter's framebuffer totals) plus the provider's configuration
// into the `kubemoot_provider_state` value (docs/rules/state.md). No I/O, no clock: the probe time
// is an input.
//
// Rules:
// - Sizes: bytes → MiB rounded UP (a footprint is never under-counted); negative, missing or
//   non-numeric sizes count as 0.
// - loadedModels / loadedModelFootprintsMiB: every /api/ps entry, by name, from size_vram
//   (falling back to size when an older server omits size_vram).
// - loadedModelContextLengths: /api/ps context_length where the server reports it (> 0).
// - availableModelFootprintsMiB: /api/tags on-disk sizes of the models NOT loaded.
// - singleSlotModels: models /api/show says cannot complete (embedding models): Ollama runs
//   them with one slot whatever OLLAMA_NUM_PARALLEL says. Absent when there are none.
// - totalVramMiB: the DCGM framebuffer total when given (> 0), else the configured total,
//   else 0 (unknown).
// - maxParallel: the configured OLLAMA_NUM_PARALLEL, at least 1 (default 1).
// - contextLength: the configured OLLAMA_CONTEXT_LENGTH when > 0; otherwise, with a known
//   total VRAM, Ollama's own default for it (4096 / 32768 / 262144); else 0 (unknown).
// - ready: true (a probe that produced this value succeeded; see ProbeFailureTracker).
// - lastProbedAt: RFC 3339 UTC to the second ("2026-06-11T00:00:00Z").
import type { ProviderState } from "../core/index.js";
import {
  BYTES_PER_MIB,
  type OllamaPsModel,
  type OllamaTagModel,
  ollamaDefaultContextLength,
} from "../engines/index.js";

export interface ProbeObservation {
  /** GET /api/ps models. */
  ps: readonly Partial<OllamaPsModel>[];
  /** GET /api/tags models. */
  tags: readonly Partial<OllamaTagModel>[];
  /** GET /api/version (kept for logs; not part of the state value). */
  version?: string | undefined;
  /** DCGM framebuffer totals, when the provider has an exporter configured. */
  dcgm?: { totalMiB: number } | undefined;
  /** Models /api/show found without the completion capability (see singleSlot()). */
  singleSlot?: readonly string[] | undefined;
}

export interface ProviderProbeConfig {
  /** The ModelProvider's name (the state key). */
  name: string;
  endpoint: string;
  /** OLLAMA_NUM_PARALLEL of the provider; default 1. */
  maxParallel?: number | undefined;
  /** OLLAMA_CONTEXT_LENGTH of the provider; 0 or absent = Ollama's VRAM-based default. */
  contextLength?: number | undefined;
  /** OLLAMA_MAX_LOADED_MODELS of the provider; 0 or absent = not known (published as absent). */
  maxLoadedModels?: number | undefined;
  /** Total VRAM when no DCGM exporter tells it; 0 or absent = unknown. */
  totalVramMiB?: number | undefined;
  activeCount?: number | undefined;
  queueDepth?: number | undefined;
}

/** Bytes → MiB, rounded up; anything not a positive finite number is 0. */
export function bytesToMiB(bytes: unknown): number {
  if (typeof bytes !== "number" || !Number.isFinite(bytes) || bytes <= 0) return 0;
  return Math.ceil(bytes / BYTES_PER_MIB);
}

/** RFC 3339 UTC, whole seconds: 2026-06-11T00:00:00Z. */
export function formatProbedAt(at: Date | number | string): string {
  const d = at instanceof Date ? at : new Date(at);
  if (Number.isNaN(d.getTime())) return "";
  return `${d.toISOString().slice(0, 19)}Z`;
}

/** A whole number > 0, else 0 (what the state's counts and sizes take from probes and config). */
export function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

/** A listed model's name (`name`, else `model`); undefined when it has neither. */
export function modelName(m: { name?: unknown; model?: unknown }): string | undefined {
  if (typeof m.name === "string" && m.name !== "") return m.name;
  if (typeof m.model === "string" && m.model !== "") return m.model;
  return undefined;
}

/** A provider's state from one successful probe. */
export function toProviderState(
  config: ProviderProbeConfig,
  observed: ProbeObservation,
  probedAt: Date | number | string,
): ProviderState {
  const loadedModels: string[] = [];
  const loadedModelFootprintsMiB: Record<string, number> = {};
  const loadedModelContextLengths: Record<string, number> = {};
  for (const m of observed.ps ?? []) {
    if (!m || typeof m !== "object") continue;
    const name = modelName(m);
    if (!name) continue;
    if (!loadedModels.includes(name)) loadedModels.push(name);
    const vram = bytesToMiB(m.size_vram);
    loadedModelFootprintsMiB[name] = Math.max(
      loadedModelFootprintsMiB[name] ?? 0,
      vram > 0 || m.size_vram !== undefined ? vram : bytesToMiB(m.size),
    );
    const ctx = count(m.context_length);
    if (ctx > 0) loadedModelContextLengths[name] = ctx;
  }
  const availableModelFootprintsMiB: Record<string, number> = {};
  for (const t of observed.tags ?? []) {
    if (!t || typeof t !== "object") continue;
    const name = modelName(t);
    if (!name || loadedModels.includes(name)) continue;
    availableModelFootprintsMiB[name] = bytesToMiB(t.size);
  }
  const dcgmTotal = count(observed.dcgm?.totalMiB);
  const totalVramMiB = dcgmTotal > 0 ? dcgmTotal : count(config.totalVramMiB);
  const configuredCtx = count(config.contextLength);
  return {
    name: config.name,
    endpoint: config.endpoint,
    maxParallel: Math.max(1, count(config.maxParallel)),
    activeCount: count(config.activeCount),
    queueDepth: count(config.queueDepth),
    loadedModels,
    ready: true,
    lastProbedAt: formatProbedAt(probedAt),
    totalVramMiB,
    loadedModelFootprintsMiB,
    availableModelFootprintsMiB,
    contextLength:
      configuredCtx > 0 ? configuredCtx : totalVramMiB > 0 ? ollamaDefaultContextLength(totalVramMiB) : 0,
    loadedModelContextLengths,
    ...(count(config.maxLoadedModels) > 0 ? { maxLoadedModels: count(config.maxLoadedModels) } : {}),
    ...(observed.singleSlot !== undefined && observed.singleSlot.length > 0
      ? { singleSlotModels: [...new Set(observed.singleSlot)].sort() }
      : {}),
  };
}

/**
 * Whether Ollama runs a model with one slot whatever OLLAMA_NUM_PARALLEL says: its /api/show
 * capabilities are known and lack "completion" (an embedding model). Unknown capabilities (an
 * older server) keep the provider's slots.
 */
export function singleSlot(capabilities: unknown): boolean {
  return Array.isArray(capabilities) && capabilities.length > 0 && !capabilities.includes("completion");
}

/**
 * The state published while a provider cannot be probed: the last good value (or an empty
 * one) with ready=false and the time of the failed probe.
 */
export function unreadyProviderState(
  config: ProviderProbeConfig,
  last: ProviderState | undefined,
  probedAt: Date | number | string,
): ProviderState {
  const base = last ?? toProviderState(config, { ps: [], tags: [] }, probedAt);
  return {
    ...base,
    name: config.name,
    endpoint: config.endpoint,
    ready: false,
    lastProbedAt: formatProbedAt(probedAt),
  };
}
