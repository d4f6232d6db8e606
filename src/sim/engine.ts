// One simulated run: a scenario's traffic against simulated Ollama GPUs under one policy — the
// world (./world.ts), the policy that places its calls (./policies) and the recorder that
// reports what happened (./recorder.ts).
import { BaselinePolicy } from "./policies/baselines.js";
import { OursPolicy } from "./policies/ours.js";
import { runsPlanner, type SimOptions, type SimResult } from "./types.js";
import { World } from "./world.js";

export * from "./types.js";

export async function simulate(opts: SimOptions): Promise<SimResult> {
  const world = new World(opts);
  const policy = runsPlanner(opts.policy) ? new OursPolicy(world) : new BaselinePolicy(world, opts.policy);
  return world.run(policy);
}
