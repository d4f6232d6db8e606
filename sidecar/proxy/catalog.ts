// The model lists a client sees through the proxy, aggregated over every provider's published
// state: GET /api/tags (every model some provider has, loaded or on disk), GET /api/ps (every
// loaded copy, with its provider), GET /v1/models. Sizes in state are MiB; the wire wants bytes.
import type { ProviderState } from "../../src/core/index.js";
import { BYTES_PER_MIB, normalizeModelName, OLLAMA_DEFAULT_KEEP_ALIVE_MS } from "../../src/engines/index.js";

function details(name: string) {
  const family = (name.split(":")[0] ?? name).split("/").pop() ?? name;
  return {
    parent_model: "",
    format: "gguf",
    family,
    families: [family],
    parameter_size: "",
    quantization_level: "",
  };
}

function probedAt(s: ProviderState, nowMs: number): number {
  const t = Date.parse(s.lastProbedAt);
  return Number.isFinite(t) ? t : nowMs;
}

/** Every model name some provider has (loaded or on disk), as published. */
export function publishedModels(states: readonly ProviderState[]): Set<string> {
  const out = new Set<string>();
  for (const s of states) {
    for (const m of s.loadedModels ?? []) out.add(m);
    for (const m of Object.keys(s.loadedModelFootprintsMiB ?? {})) out.add(m);
    for (const m of Object.keys(s.availableModelFootprintsMiB ?? {})) out.add(m);
  }
  return out;
}

/**
 * Published names that differ from their normalised form, by that form: an engine that serves
 * `tiny` (llama.cpp's file name) or `Qwen/Qwen3-8B` (vLLM) is asked for those names, not for
 * Ollama's `tiny:latest`. A name published in both spellings keeps Ollama's reading.
 */
export function publishedSpellings(published: Iterable<string>): Map<string, string> {
  const all = new Set(published);
  const out = new Map<string, string>();
  for (const raw of all) {
    const n = normalizeModelName(raw);
    if (n !== raw && !all.has(n)) out.set(n, raw);
  }
  return out;
}

export function tagsBody(states: readonly ProviderState[], nowMs = Date.now()) {
  const byName = new Map<string, { mib: number; at: number }>();
  for (const s of states) {
    const at = probedAt(s, nowMs);
    const put = (name: string, mib: number, onDisk: boolean) => {
      const prev = byName.get(name);
      // On-disk sizes (from /api/tags) win over VRAM footprints of loaded copies.
      if (!prev || (onDisk && mib > 0) || (prev.mib === 0 && mib > 0)) byName.set(name, { mib, at });
    };
    for (const [m, mib] of Object.entries(s.loadedModelFootprintsMiB ?? {})) put(m, mib, false);
    for (const m of s.loadedModels ?? []) if (!byName.has(m)) put(m, 0, false);
    for (const [m, mib] of Object.entries(s.availableModelFootprintsMiB ?? {})) put(m, mib, true);
  }
  const models = [...byName.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, v]) => ({
      name,
      model: name,
      modified_at: new Date(v.at).toISOString(),
      size: Math.round(v.mib * BYTES_PER_MIB),
      digest: "",
      details: details(name),
    }));
  return { models };
}

export function psBody(states: readonly ProviderState[], nowMs = Date.now()) {
  const rows: Array<Record<string, unknown> & { name: string; provider: string }> = [];
  for (const s of states) {
    if (!s.ready) continue;
    const names = new Set([...(s.loadedModels ?? []), ...Object.keys(s.loadedModelFootprintsMiB ?? {})]);
    for (const name of names) {
      const bytes = Math.round((s.loadedModelFootprintsMiB?.[name] ?? 0) * BYTES_PER_MIB);
      rows.push({
        name,
        model: name,
        size: bytes,
        digest: "",
        details: details(name),
        // Approximate: the state does not carry expiry; Ollama's default keep_alive from the probe.
        expires_at: new Date(probedAt(s, nowMs) + OLLAMA_DEFAULT_KEEP_ALIVE_MS).toISOString(),
        size_vram: bytes,
        context_length: s.loadedModelContextLengths?.[name] || s.contextLength || 0,
        provider: s.name,
      });
    }
  }
  rows.sort((a, b) => a.name.localeCompare(b.name) || a.provider.localeCompare(b.provider));
  return { models: rows };
}

export function openaiModelsBody(states: readonly ProviderState[], nowMs = Date.now()) {
  const tags = tagsBody(states, nowMs).models;
  return {
    object: "list",
    data: tags.map((t) => ({
      id: t.name,
      object: "model",
      created: Math.floor(Date.parse(t.modified_at) / 1000),
      owned_by: t.name.includes("/") ? (t.name.split("/").slice(-2, -1)[0] ?? "library") : "library",
    })),
  };
}

/** GET /v1/models/{id}: the catalog's entry for `id` (normalised), or undefined. */
export function openaiModel(states: readonly ProviderState[], id: string, nowMs = Date.now()) {
  const want = normalizeModelName(id);
  return openaiModelsBody(states, nowMs).data.find((m) => m.id === want);
}

/** The context a provider gives `model`: loaded context, else configured; 0 = unknown. */
export function providerContext(s: ProviderState | undefined, model: string): number {
  if (!s) return 0;
  return s.loadedModelContextLengths?.[model] || s.contextLength || 0;
}
