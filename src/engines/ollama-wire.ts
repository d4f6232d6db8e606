// Ollama's HTTP wire shapes (docs/rules/ollama.md), as the client reads them and the emulator
// writes them. Sizes are bytes and durations nanoseconds, exactly as on the wire.

export interface OllamaModelDetails {
  parent_model: string;
  format: string;
  family: string;
  families: string[] | null;
  parameter_size: string;
  quantization_level: string;
}

/** One entry of `GET /api/ps`. */
export interface OllamaPsModel {
  name: string;
  model: string;
  /** Bytes the loaded model takes (weights + KV cache + graph). */
  size: number;
  digest: string;
  details: OllamaModelDetails;
  /** RFC 3339. */
  expires_at: string;
  /** Bytes of `size` that sit in VRAM. */
  size_vram: number;
  /** The loaded context window (num_ctx). */
  context_length?: number;
}

/** One entry of `GET /api/tags`: a model on disk. */
export interface OllamaTagModel {
  name: string;
  model: string;
  /** RFC 3339. */
  modified_at: string;
  /** On-disk bytes. */
  size: number;
  digest: string;
  details: OllamaModelDetails;
}

export interface OllamaShowResponse {
  license?: string;
  modelfile?: string;
  parameters?: string;
  template?: string;
  details?: OllamaModelDetails;
  model_info?: Record<string, unknown>;
  capabilities?: string[];
  modified_at?: string;
}

export type OllamaDoneReason = "stop" | "length" | "load" | "unload";

/** The timing and counting fields of a final chunk (zero values are omitted on the wire). */
export interface OllamaMetrics {
  total_duration?: number;
  load_duration?: number;
  prompt_eval_count?: number;
  prompt_eval_duration?: number;
  eval_count?: number;
  eval_duration?: number;
}

/** A chunk or the whole answer of `POST /api/generate`. */
export interface OllamaGenerateResponse extends OllamaMetrics {
  model: string;
  created_at: string;
  response: string;
  done: boolean;
  done_reason?: OllamaDoneReason;
}

/** `keep_alive` as a request carries it: seconds as a number, or a Go duration string. */
export type OllamaKeepAlive = number | string;
