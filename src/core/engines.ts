// The inference engines a provider may run (docs/rules/engines.md). Ollama loads and unloads
// models on demand; the others serve the models they were started with, so they are always
// warm for those and never sent a load or an unload.

/** Engines a ModelProvider may declare (`spec.engine`); the default is "ollama". */
export const ENGINES = ["ollama", "vllm", "llamacpp", "sglang", "openai"] as const;

export type Engine = (typeof ENGINES)[number];

export const DEFAULT_ENGINE: Engine = "ollama";

export function isEngine(v: unknown): v is Engine {
  return typeof v === "string" && (ENGINES as readonly string[]).includes(v);
}

/** True for engines that serve a fixed set of models (no load or unload on demand). */
export function isFixedModelEngine(engine: Engine | undefined): boolean {
  return engine !== undefined && engine !== "ollama";
}

/** True for engines whose native API is OpenAI's (an Ollama-API call to them is translated). */
export function speaksOpenAiOnly(engine: Engine | undefined): boolean {
  return isFixedModelEngine(engine);
}
