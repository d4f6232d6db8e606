// The real llama.cpp engine as a child process (docs/rules/engines.md "A real llama.cpp engine").
export { type EngineProcess, startEngineProcess } from "./engine-process.js";
