// The scheduling-quality simulation (docs/benchmarks.md `sim`): virtual time, seeded traffic,
// the sidecar's own call loop (src/scheduler) for its policies, and a simulated Ollama that is
// the emulator's own scheduler model. No wall clock except the measured decision cost.

export type { SnapshotIndex } from "../core/index.js";
export { Rng } from "../prng/index.js";
export {
  type CallOutcome,
  type CallRecord,
  type CopyInfo,
  type DecisionRecord,
  type LoadRecord,
  POLICIES,
  type PolicyName,
  runsPlanner,
  type SimMetrics,
  type SimOptions,
  type SimResult,
  simulate,
  type UnloadRecord,
  WALL_CLOCK_FIELDS,
} from "./engine.js";
export { EventLoop, VirtualClock } from "./events.js";
export {
  modelWithFootprint,
  type OllamaListener,
  SimOllama,
  type SimOllamaConfig,
  type UnloadCause,
} from "./ollama.js";
export {
  type ColdLoads,
  coldLoadsOnFreeRoom,
  type Home,
  homes,
  type LiveWork,
  liveWorkEvictions,
  type SecondCopy,
  secondCopies,
  type WarmReuse,
  warmReuse,
} from "./properties.js";
export {
  homelab,
  lab,
  type Role,
  SCENARIOS,
  type Scenario,
  type ScenarioAgent,
  type ScenarioCrew,
  type ScenarioGpu,
  type ScenarioModel,
  scale,
  scenarioByName,
} from "./scenarios.js";
export { mean, percentile, percentileSorted, round } from "./stats.js";
export { type Discussion, generateWorkload, type PlannedCall, type Turn } from "./workload.js";
