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
