// The traffic of one (scenario, seed): discussions arriving as a Poisson process, the agents
// each selects, and per call its work and prompt. Every policy replays this same list, so
// they are compared on identical arrivals. A call's own arrival time still depends on when
// the agent's previous call finished (an agent calls one at a time).
import { Rng } from "../prng/index.js";
import type { LoopPrompt } from "./agent-loop-types.js";
import type { Scenario, ScenarioAgent } from "./scenarios.js";

export interface PlannedCall {
  /** Lognormal factor around the model's mean call time (mean 1). */
  workFactor: number;
  promptTokens: number;
  /** Think time before this call (ms): 0 for an agent's first call. */
  thinkMs: number;
  /** An agent loop's turn (./agent-loops.ts): its tokens to generate and its prompt's parts. */
  outputTokens?: number;
  prompt?: LoopPrompt;
}

export interface Turn {
  agent: ScenarioAgent;
  /** Offset of the first call from the discussion's start (ms). */
  startOffsetMs: number;
  calls: PlannedCall[];
}

export interface Discussion {
  id: string;
  crew: string;
  atMs: number;
  turns: Turn[];
}

export function generateWorkload(scenario: Scenario, seed: number): Discussion[] {
  const root = new Rng(seed);
  const arrivals = root.fork(`${scenario.name}/arrivals`);
  const work = root.fork(`${scenario.name}/work`);
  const agentsById = new Map(scenario.agents.map((a) => [a.id, a]));
  const meanGapMs = 3_600_000 / scenario.discussionsPerHour;
  const out: Discussion[] = [];
  let t = arrivals.exponential(meanGapMs);
  let n = 0;
  while (t < scenario.arrivalWindowS * 1000) {
    const crew = arrivals.pick(scenario.crews);
    const members = crew.agents.map((id) => agentsById.get(id)!);
    const coordinator = members.filter((a) => a.role === "coordinator");
    const others = members.filter((a) => a.role !== "coordinator");
    let selected = others.filter(() => arrivals.chance(scenario.selectProbability));
    if (selected.length === 0 && others.length > 0) selected = [arrivals.pick(others)];
    const turns: Turn[] = [];
    for (const agent of [...coordinator, ...selected]) {
      const count = work.int(scenario.callsMin, scenario.callsMax);
      const calls: PlannedCall[] = [];
      for (let i = 0; i < count; i++) {
        calls.push({
          workFactor: work.lognormal(1, scenario.serviceSigma),
          promptTokens: work.int(scenario.promptTokensMin, scenario.promptTokensMax),
          thinkMs: i === 0 ? 0 : Math.round(work.exponential(scenario.thinkMeanS * 1000)),
        });
      }
      turns.push({ agent, startOffsetMs: Math.round(work.float() * 2000), calls });
    }
    out.push({ id: `d${++n}`, crew: crew.name, atMs: Math.round(t), turns });
    t += arrivals.exponential(meanGapMs);
  }
  return out;
}
