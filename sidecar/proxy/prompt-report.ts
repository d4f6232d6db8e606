// What an OpenAI-style answer tells of its prompt beyond the count (docs/rules/engines.md
// "Prompt caches"): the tokens the engine reused from its prompt cache
// (usage.prompt_tokens_details.cached_tokens, else llama.cpp's timings.cache_n) and the time it
// spent on the rest (llama.cpp's timings.prompt_ms). Read by the stream taps (framing.ts) and by
// the translation back to Ollama's answer (translate/), in one place.

function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0;
}

function field(o: unknown, key: string): unknown {
  return typeof o === "object" && o !== null ? (o as Record<string, unknown>)[key] : undefined;
}

/** Cached prompt tokens and the prompt's time (ms) an answer reports; 0 where it says nothing. */
export function promptReport(usage: unknown, timings: unknown): { cachedTokens: number; promptMs: number } {
  return {
    cachedTokens:
      count(field(field(usage, "prompt_tokens_details"), "cached_tokens")) ||
      count(field(timings, "cache_n")),
    promptMs: count(field(timings, "prompt_ms")),
  };
}
