// Agent loops (docs/benchmarks.md, `affinity`; docs/rules/placement.md §5.5): each agent runs one
// tool loop — a conversation that grows by the last answer and a tool result every turn, from a
// system prompt (some crews share theirs) and a first question to a context of thousands of
// tokens — on Ollama cards that keep a prompt cache per slot. The prompt is known by its parts
// (keys standing for the text, and their tokens), as the emulator's caches know prompts.
import type { Candidate } from "../core/index.js";
import { Rng } from "../prng/index.js";
import type { AgentLoopShape, LoopPart } from "./agent-loop-types.js";
import type { Scenario, ScenarioAgent, ScenarioCrew, ScenarioGpu, ScenarioModel } from "./scenarios.js";
import type { Discussion, PlannedCall } from "./workload.js";

/**
 * The one model of every agent-loop scenario: a 14b with four 32k-token slots (about 9 GiB of
 * weights and 20 GiB of KV cache), on 48 GiB cards.
 */
export const LOOP_MODEL: ScenarioModel = { name: "qwen3:14b", footprintMiB: 29_000, serviceMeanS: 10 };
const CARD_MIB = 49_140;

/** Slots per card (OLLAMA_NUM_PARALLEL) and every card's decode rate (tokens/s). */
const LOOP_SLOTS = 4;
const LOOP_DECODE_TOKENS_PER_S = 40;

export interface LoopScenarioSpec {
  name: string;
  description: string;
  /** One card each, named card-a, card-b…: its prefill rate (prompt tokens/s). */
  prefill: number[];
  crews: number;
  agentsPerCrew: number;
  loops: AgentLoopShape;
}

export function agentLoopScenario(s: LoopScenarioSpec): Scenario {
  const candidates: Candidate[] = [{ model: LOOP_MODEL.name, score: 100 }];
  const agents: ScenarioAgent[] = [];
  const crews: ScenarioCrew[] = [];
  for (let c = 1; c <= s.crews; c++) {
    const crew = `crew-${c}`;
    const ids: string[] = [];
    for (let i = 1; i <= s.agentsPerCrew; i++) {
      const id = `${crew}/agent-${i}`;
      agents.push({ id, crew, role: "tooler", candidates: [...candidates] });
      ids.push(id);
    }
    crews.push({ name: crew, agents: ids });
  }
  const gpus: ScenarioGpu[] = s.prefill.map((promptTokensPerS, i) => ({
    name: `card-${String.fromCharCode(97 + i)}`,
    promptTokensPerS,
    tokensPerS: LOOP_DECODE_TOKENS_PER_S,
    vramMiB: CARD_MIB,
    preload: [LOOP_MODEL.name],
  }));
  return {
    name: s.name,
    description: s.description,
    gpus,
    numParallel: LOOP_SLOTS,
    // Room for the longest context with its answer.
    contextLength: 32768,
    models: [LOOP_MODEL],
    agents,
    crews,
    discussionsPerHour: 0,
    arrivalWindowS: s.loops.startAfterS + s.loops.startWindowS,
    selectProbability: 1,
    callsMin: s.loops.turnsMin,
    callsMax: s.loops.turnsMax,
    thinkMeanS: s.loops.toolMeanS,
    serviceSigma: 0,
    promptTokensMin: s.loops.systemTokens + s.loops.firstTokens,
    promptTokensMax: s.loops.contextMax,
    tolerance: 0,
    loops: s.loops,
  };
}

/** Every agent's loop as one discussion of one turn whose calls are the loop's turns. */
export function generateAgentLoops(sc: Scenario, seed: number): Discussion[] {
  const shape = sc.loops;
  if (shape === undefined) throw new RangeError(`scenario "${sc.name}" has no agent loops`);
  const rng = new Rng(seed).fork(`${sc.name}/loops`);
  const out: Discussion[] = [];
  for (const agent of sc.agents) {
    const turns = rng.int(shape.turnsMin, shape.turnsMax);
    const context = rng.int(shape.contextMin, shape.contextMax);
    const system: LoopPart = {
      key: rng.chance(shape.sharedSystem) ? `${agent.crew}/system` : `${agent.id}/system`,
      tokens: shape.systemTokens,
      assistant: false,
    };
    const parts: LoopPart[] = [
      system,
      { key: `${agent.id}/question`, tokens: shape.firstTokens, assistant: false },
    ];
    const growth = Math.max(0, context - shape.systemTokens - shape.firstTokens) / Math.max(1, turns - 1);
    const calls: PlannedCall[] = [];
    for (let k = 0; k < turns; k++) {
      const answer: LoopPart = {
        key: `${agent.id}/answer-${k}`,
        tokens: rng.int(shape.answerMin, shape.answerMax),
        assistant: true,
      };
      const promptTokens = parts.reduce((n, p) => n + p.tokens, 0);
      calls.push({
        workFactor: 1,
        promptTokens,
        thinkMs: k === 0 ? 0 : Math.round(rng.exponential(shape.toolMeanS * 1000)),
        outputTokens: answer.tokens,
        prompt: { conversation: agent.id, parts: [...parts], answer },
      });
      const tool = Math.max(50, Math.round((growth - answer.tokens) * (0.5 + rng.float())));
      parts.push(answer, { key: `${agent.id}/tool-${k}`, tokens: tool, assistant: false });
    }
    const atMs = Math.round((shape.startAfterS + rng.float() * shape.startWindowS) * 1000);
    out.push({ id: `loop/${agent.id}`, crew: agent.crew, atMs, turns: [{ agent, startOffsetMs: 0, calls }] });
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}

/** The loops of the sim's scenario; `bench affinity`'s traces vary their turns and contexts. */
export const LOOP_SHAPE: AgentLoopShape = {
  turnsMin: 5,
  turnsMax: 40,
  systemTokens: 1500,
  sharedSystem: 0.5,
  firstTokens: 500,
  contextMin: 8000,
  contextMax: 30000,
  answerMin: 100,
  answerMax: 300,
  toolMeanS: 2,
  startWindowS: 20,
  startAfterS: 60,
};

/**
 * The sim's agent-loop scenario: two crews of four agents on three 48 GiB cards of different
 * prefill speeds (6,000, 4,000 and 2,500 prompt tokens/s; 40 tokens/s decoding), four slots
 * each, loops of 5–40 turns growing to 8k–30k tokens. Its point is where each turn runs: the
 * card that ran the last turn holds the conversation.
 */
export function agentLoops(): Scenario {
  return agentLoopScenario({
    name: "agent-loops",
    description: "two crews of four agents in tool loops growing to 8k-30k tokens, on three cards",
    prefill: [6000, 4000, 2500],
    crews: 2,
    agentsPerCrew: 4,
    loops: LOOP_SHAPE,
  });
}
