// The scheduling-quality simulation (docs/benchmarks.md `sim`): virtual time, seeded traffic,
// the sidecar's own call loop (src/scheduler) for its policies, and a simulated Ollama that is
// the emulator's own scheduler model. No wall clock except the measured decision cost.

export { agentLoopScenario, LOOP_SHAPE } from "./agent-loops.js";
export {
  type CallRecord,
  type DecisionRecord,
  POLICIES,
  type PolicyName,
  type PromptRecord,
  type SimMetrics,
  type SimOptions,
  type SimResult,
  simulate,
  type UnloadRecord,
} from "./engine.js";
export { EventLoop } from "./events.js";
export { SimOllama } from "./ollama.js";
export { SCENARIOS, scenarioByName } from "./scenario-registry.js";
export { CALL_SHAPE, homelab, lab, type Scenario } from "./scenarios.js";
export { percentile } from "./stats.js";
