// Ollama's documented defaults and the small conversions every user of its API needs.
// Pure: no I/O.

export const BYTES_PER_MIB = 1024 * 1024;

/** OLLAMA_NUM_PARALLEL default. */
export const OLLAMA_DEFAULT_NUM_PARALLEL = 1;
/** OLLAMA_MAX_QUEUE default. */
export const OLLAMA_DEFAULT_MAX_QUEUE = 512;
/** OLLAMA_MAX_LOADED_MODELS default on one GPU (3 per GPU). */
export const OLLAMA_DEFAULT_MAX_LOADED_MODELS = 3;
/** OLLAMA_KEEP_ALIVE default: five minutes. */
export const OLLAMA_DEFAULT_KEEP_ALIVE_MS = 5 * 60 * 1000;
/** Ollama's default `num_keep`: tokens at the start of a prompt kept when it is cut. */
export const OLLAMA_DEFAULT_NUM_KEEP = 4;

/** The 503 message past OLLAMA_MAX_QUEUE (two spaces after the period, as Ollama writes it). */
export const OLLAMA_MAX_QUEUE_MESSAGE = "server busy, please try again.  maximum pending requests exceeded";

/** The 404 message of an unknown model. */
export function modelNotFoundMessage(model: string): string {
  return `model "${model}" not found, try pulling it first`;
}

/**
 * The context length Ollama picks when OLLAMA_CONTEXT_LENGTH is 0 (unset): 4096 below
 * 23 GiB of VRAM, 32768 from 23 GiB, 262144 from 47 GiB. An unknown total (0) gives 4096.
 */
export function ollamaDefaultContextLength(totalVramMiB: number): number {
  if (totalVramMiB >= 47 * 1024) return 262_144;
  if (totalVramMiB >= 23 * 1024) return 32_768;
  return 4096;
}

/**
 * Ollama's model-name normalisation for the common case: a name without a tag means
 * `:latest` ("qwen3" → "qwen3:latest"). Names with a registry or namespace are kept as given.
 */
export function normalizeModelName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") return trimmed;
  const lastSlash = trimmed.lastIndexOf("/");
  const tail = trimmed.slice(lastSlash + 1);
  return tail.includes(":") ? trimmed : `${trimmed}:latest`;
}
