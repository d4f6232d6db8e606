// The simulation's scenarios by name (docs/benchmarks.md, `sim`): the discussion worlds of
// ./scenarios.ts and the agent loops of ./agent-loops.ts.
import { agentLoops } from "./agent-loops.js";
import { homelab, lab, mixed, type Scenario, scale } from "./scenarios.js";

export const SCENARIOS: Record<string, () => Scenario> = {
  homelab,
  lab,
  scale,
  mixed,
  "agent-loops": agentLoops,
};

export function scenarioByName(name: string): Scenario {
  const make = SCENARIOS[name];
  if (make === undefined) {
    throw new RangeError(`unknown scenario "${name}" (known: ${Object.keys(SCENARIOS).join(", ")})`);
  }
  return make();
}
