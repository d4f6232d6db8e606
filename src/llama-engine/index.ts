// A real llama.cpp server over node-llama-cpp (docs/rules/engines.md "A real llama.cpp engine"):
// what the `engine` command starts. Public API.
export {
  defaultThreads,
  type LlamaEngineHandle,
  type LlamaEngineOptions,
  startLlamaEngine,
} from "./server.js";
