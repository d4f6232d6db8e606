// Shapes of llama-server's answers that both the project's real engine (src/llama-engine) and
// the emulator's llama.cpp personality send (src/engines/README.md, "llama.cpp server").

/** The entry of the Ollama-style `models` list that llama-server's /v1/models adds beside OpenAI's. */
export function llamacppOllamaStyleModel(id: string): Record<string, unknown> {
  return {
    name: id,
    model: id,
    modified_at: "",
    size: "",
    digest: "",
    type: "model",
    description: "",
    tags: [""],
    capabilities: ["completion"],
    parameters: "",
    details: {
      parent_model: "",
      format: "gguf",
      family: "",
      families: [""],
      parameter_size: "",
      quantization_level: "",
    },
  };
}

/**
 * llama-server's sampling defaults, as /props and /slots show them in `params` (seed 4294967295:
 * a random one per request; max_tokens and n_predict -1: no limit).
 */
export const LLAMACPP_DEFAULT_PARAMS = Object.freeze({
  seed: 4294967295,
  temperature: 0.8,
  top_k: 40,
  top_p: 0.95,
  min_p: 0.05,
  repeat_last_n: 64,
  repeat_penalty: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  max_tokens: -1,
  n_predict: -1,
  stream: false,
});
