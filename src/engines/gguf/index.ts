// Public API of the GGUF generator (docs/rules/engines.md "A generated model").
export { GGUF_PRESETS, type GgufPreset, writeLlamaGguf } from "./llama-model.js";
