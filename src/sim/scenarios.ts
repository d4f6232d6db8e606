// The simulated worlds (docs/benchmarks.md, `sim`): GPUs, models with their KV-inclusive
// footprints and mean call times, crews of agents with their ranked candidate lists, and the
// discussion traffic. A scenario's structure is fixed; only the traffic depends on the seed.
import type { Candidate } from "../core/index.js";
import { Rng } from "../prng/index.js";
import type { AgentLoopShape } from "./agent-loop-types.js";
import type { SimFixedEngineConfig } from "./fixed-engine.js";

export interface ScenarioGpu {
  name: string;
  /** Total VRAM as probed (MiB). */
  vramMiB: number;
  /**
   * A fixed-model engine on this card instead of Ollama (src/sim/fixed-engine.ts): it serves
   * `serves` only, runs up to `slots` requests at once while their prompts fit `kvTokens`, each
   * slowed by `slowdown` per other request running.
   */
  fixed?: Pick<SimFixedEngineConfig, "engine" | "serves" | "slots" | "kvTokens" | "slowdown">;
  /** The card's prefill and decode rates (tokens/s); default 1,000 and 50. */
  promptTokensPerS?: number;
  tokensPerS?: number;
  /** Models the card loads at time 0 and keeps (keep_alive -1); default none. */
  preload?: string[];
}

export interface ScenarioModel {
  name: string;
  /** Footprint once loaded (weights + KV slab at the scenario's context and slots), MiB. */
  footprintMiB: number;
  /** Mean call time on any GPU (s): the service time alone. */
  serviceMeanS: number;
}

export type Role = "coordinator" | "tooler" | "analyst";

export interface ScenarioAgent {
  /** "namespace/name". */
  id: string;
  crew: string;
  role: Role;
  /** Ranked candidates, preferred first (the binder's list). */
  candidates: Candidate[];
}

export interface ScenarioCrew {
  name: string;
  agents: string[];
}

export interface Scenario {
  name: string;
  description: string;
  gpus: ScenarioGpu[];
  /** OLLAMA_NUM_PARALLEL on every GPU. */
  numParallel: number;
  /** OLLAMA_CONTEXT_LENGTH on every GPU (tokens). */
  contextLength: number;
  models: ScenarioModel[];
  agents: ScenarioAgent[];
  crews: ScenarioCrew[];
  /** Poisson rate of discussions over the whole fleet (per hour). */
  discussionsPerHour: number;
  /** Discussions arrive during this much virtual time (s); the run then drains. */
  arrivalWindowS: number;
  /** Probability that a non-coordinator crew member is selected for a discussion. */
  selectProbability: number;
  /** Calls per selected agent: uniform in [min, max]. */
  callsMin: number;
  callsMax: number;
  /** Mean think time between an agent's consecutive calls (s, exponential). */
  thinkMeanS: number;
  /** Log-space standard deviation of call times (lognormal around each model's mean). */
  serviceSigma: number;
  /** Prompt sizes (tokens), uniform. */
  promptTokensMin: number;
  promptTokensMax: number;
  /** Candidate tolerance (points). */
  tolerance: number;
  /** Agent loops instead of discussions (./agent-loops.ts): the traffic is each agent's tool loop. */
  loops?: AgentLoopShape;
}

const GiB = 1024;

/** How every scenario's discussions call: its selection, calls, think and call times, prompts. */
export const CALL_SHAPE = {
  selectProbability: 0.5,
  callsMin: 1,
  callsMax: 3,
  thinkMeanS: 3,
  serviceSigma: 0.5,
  promptTokensMin: 500,
  promptTokensMax: 6000,
  tolerance: 10,
} as const satisfies Partial<Scenario>;

/** Candidates by role; a function picks them per member (its 1-based number within the role). */
type CrewCandidates = Record<Role, Candidate[] | ((i: number) => Candidate[])>;

/**
 * Appends one crew to `agents` and `crews`: `crew/coordinator`, then `crew/tooler-1`… and
 * `crew/analyst-1`…, in that order (a picking function is called in that order too).
 */
function addCrew(
  into: { agents: ScenarioAgent[]; crews: ScenarioCrew[] },
  crew: string,
  counts: { toolers: number; analysts: number },
  candidates: CrewCandidates,
): void {
  const ids: string[] = [];
  const add = (name: string, role: Role, i: number) => {
    const c = candidates[role];
    const id = `${crew}/${name}`;
    into.agents.push({ id, crew, role, candidates: typeof c === "function" ? c(i) : [...c] });
    ids.push(id);
  };
  add("coordinator", "coordinator", 1);
  for (let i = 1; i <= counts.toolers; i++) add(`tooler-${i}`, "tooler", i);
  for (let i = 1; i <= counts.analysts; i++) add(`analyst-${i}`, "analyst", i);
  into.crews.push({ name: crew, agents: ids });
}

/** Two ranked candidates. */
function pairOf(a: string, b: string, scores: [number, number]): Candidate[] {
  return [
    { model: a, score: scores[0] },
    { model: b, score: scores[1] },
  ];
}

// ── homelab ──────────────────────────────────────────────────────────────────────────────────

/**
 * Two consumer cards, one slot each, the prod bundle (qwen3 32b/14b/8b), three crews of one
 * coordinator (32b), four toolers (8b preferred, 14b within tolerance) and two analysts (14b).
 * Rate: 60 discussions an hour for two hours. Each discussion asks about 2 coordinator calls
 * of 20 s (40 s on the only card that holds the 32b) and about 40 s of 8b/14b work, so the
 * 5090 is busy with the 32b alone ~65% of the time, the 8b/14b work must fit beside it, and
 * all selected agents start together (bursts): the cards run about half busy on average,
 * with queues at the peaks — loaded, not saturated.
 */
export function homelab(): Scenario {
  const models: ScenarioModel[] = [
    { name: "qwen3:32b", footprintMiB: 27252, serviceMeanS: 20 },
    { name: "qwen3:14b", footprintMiB: 12224, serviceMeanS: 10 },
    { name: "qwen3:8b", footprintMiB: 5979, serviceMeanS: 5 },
  ];
  const agents: ScenarioAgent[] = [];
  const crews: ScenarioCrew[] = [];
  for (const crew of ["alpha", "beta", "gamma"]) {
    addCrew(
      { agents, crews },
      crew,
      { toolers: 4, analysts: 2 },
      {
        coordinator: [{ model: "qwen3:32b", score: 90 }],
        tooler: pairOf("qwen3:8b", "qwen3:14b", [80, 74]),
        analyst: pairOf("qwen3:14b", "qwen3:8b", [85, 60]),
      },
    );
  }
  return {
    name: "homelab",
    description: "RTX 5090 + RTX 4090, 1 slot each; qwen3 32b/14b/8b; 3 crews of 7",
    gpus: [
      { name: "rtx-4090", vramMiB: 24563 },
      { name: "rtx-5090", vramMiB: 32605 },
    ],
    numParallel: 1,
    contextLength: 8192,
    models,
    agents,
    crews,
    discussionsPerHour: 60,
    arrivalWindowS: 2 * 3600,
    ...CALL_SHAPE,
  };
}

// ── shared model sizing for lab and scale ────────────────────────────────────────────────────

/**
 * KV-inclusive footprint of a Q4 model of `paramsB` billion parameters at 8192 tokens and
 * `slots` slots: ~620 MiB per billion weights + 500 MiB runtime + the emulator's KV slab
 * (0.125 MiB/token at 8B, scaling with √size).
 */
function footprintOf(paramsB: number, slots: number, ctx = 8192): number {
  const kvPerToken = Math.round(0.125 * Math.sqrt(paramsB / 8) * 4096) / 4096;
  return Math.round(paramsB * 620 + 500) + Math.ceil(ctx * slots * kvPerToken);
}

/** Mean call time by model size (s): small 3, 8b 5, 12–14b 10, 27–32b 20, 70b 35. */
function serviceMeanOf(paramsB: number): number {
  if (paramsB <= 4) return 3;
  if (paramsB <= 9) return 5;
  if (paramsB <= 15) return 10;
  if (paramsB <= 35) return 20;
  return 35;
}

function sized(name: string, paramsB: number, slots: number): ScenarioModel {
  return { name, footprintMiB: footprintOf(paramsB, slots), serviceMeanS: serviceMeanOf(paramsB) };
}

// ── lab ──────────────────────────────────────────────────────────────────────────────────────

/**
 * Eight mixed GPUs (2×80, 2×40, 4×24 GiB, two slots each), twelve models from 0.5b to 70b, six
 * crews (40 agents) each with its own mix: coordinators on a big model (a second big one
 * within tolerance), toolers on small ones, analysts on mid-size ones.
 * Rate: 150 discussions an hour for one hour: the 70b and 32b work keeps the big cards busy
 * and the twelve models cannot all stay resident, so placement decides how often they reload.
 */
export function lab(): Scenario {
  const slots = 2;
  const models = [
    sized("qwen2.5:0.5b", 0.5, slots),
    sized("llama3.2:1b", 1, slots),
    sized("qwen3:1.7b", 1.7, slots),
    sized("llama3.2:3b", 3, slots),
    sized("qwen3:4b", 4, slots),
    sized("llama3.1:8b", 8, slots),
    sized("qwen3:8b", 8, slots),
    sized("gemma3:12b", 12, slots),
    sized("qwen3:14b", 14, slots),
    sized("gemma3:27b", 27, slots),
    sized("qwen3:32b", 32, slots),
    sized("llama3.3:70b", 70, slots),
  ];
  // Per crew: [coordinator preferred, coordinator alternate], tooler pair, analyst pair.
  const mixes: Array<{ coord: [string, string]; tool: [string, string]; anal: [string, string] }> = [
    {
      coord: ["llama3.3:70b", "qwen3:32b"],
      tool: ["qwen3:4b", "qwen3:8b"],
      anal: ["qwen3:14b", "gemma3:12b"],
    },
    {
      coord: ["llama3.3:70b", "gemma3:27b"],
      tool: ["llama3.2:3b", "llama3.1:8b"],
      anal: ["gemma3:12b", "qwen3:14b"],
    },
    {
      coord: ["qwen3:32b", "gemma3:27b"],
      tool: ["qwen3:1.7b", "qwen3:4b"],
      anal: ["qwen3:14b", "qwen3:8b"],
    },
    {
      coord: ["qwen3:32b", "llama3.3:70b"],
      tool: ["llama3.2:1b", "llama3.2:3b"],
      anal: ["llama3.1:8b", "qwen3:8b"],
    },
    {
      coord: ["gemma3:27b", "qwen3:32b"],
      tool: ["qwen2.5:0.5b", "qwen3:1.7b"],
      anal: ["gemma3:12b", "qwen3:14b"],
    },
    {
      coord: ["gemma3:27b", "qwen3:32b"],
      tool: ["qwen3:8b", "qwen3:4b"],
      anal: ["qwen3:14b", "gemma3:27b"],
    },
  ];
  const sizes = [7, 7, 7, 7, 6, 6];
  const agents: ScenarioAgent[] = [];
  const crews: ScenarioCrew[] = [];
  mixes.forEach((mix, c) => {
    const crew = `crew-${c + 1}`;
    const size = sizes[c]!;
    const analysts = size >= 7 ? 3 : 2;
    addCrew(
      { agents, crews },
      crew,
      { toolers: size - 1 - analysts, analysts },
      {
        coordinator: pairOf(...mix.coord, [95, 88]),
        tooler: pairOf(...mix.tool, [80, 73]),
        analyst: pairOf(...mix.anal, [85, 78]),
      },
    );
  });
  const gpus: ScenarioGpu[] = [
    { name: "a100-80g-1", vramMiB: 80 * GiB },
    { name: "a100-80g-2", vramMiB: 80 * GiB },
    { name: "a100-40g-1", vramMiB: 40 * GiB },
    { name: "a100-40g-2", vramMiB: 40 * GiB },
    { name: "l4-24g-1", vramMiB: 24 * GiB },
    { name: "l4-24g-2", vramMiB: 24 * GiB },
    { name: "l4-24g-3", vramMiB: 24 * GiB },
    { name: "l4-24g-4", vramMiB: 24 * GiB },
  ];
  return {
    name: "lab",
    description: "8 GPUs (2×80, 2×40, 4×24 GiB), 2 slots; 12 models 0.5b–70b; 6 crews, 40 agents",
    gpus,
    numParallel: slots,
    contextLength: 8192,
    models,
    agents,
    crews,
    discussionsPerHour: 150,
    arrivalWindowS: 3600,
    ...CALL_SHAPE,
  };
}

// ── scale ────────────────────────────────────────────────────────────────────────────────────

/**
 * 64 GPUs (8×80, 16×40, 40×24 GiB, two slots), 40 models (10 families × 4 sizes), 500
 * agents in 50 crews of 10. Its point is the decision cost as the fleet grows; the traffic
 * (1000 discussions an hour for 20 minutes) keeps a realistic share of the fleet busy.
 */
export function scale(): Scenario {
  const slots = 2;
  const rng = new Rng(0x5ca1e);
  const families = [
    "qwen3",
    "llama3",
    "gemma3",
    "mistral",
    "phi4",
    "deepseek",
    "granite",
    "olmo",
    "falcon",
    "yi",
  ];
  const sizeSets: number[][] = [
    [1, 4, 8, 14],
    [3, 8, 27, 70],
    [1.7, 8, 12, 32],
    [0.5, 4, 14, 27],
    [3, 12, 32, 70],
  ];
  const models: ScenarioModel[] = [];
  const byFamily = new Map<string, ScenarioModel[]>();
  families.forEach((f, i) => {
    const list = sizeSets[i % sizeSets.length]!.map((p) => sized(`${f}:${p}b`, p, slots));
    byFamily.set(f, list);
    models.push(...list);
  });
  const agents: ScenarioAgent[] = [];
  const crews: ScenarioCrew[] = [];
  for (let c = 0; c < 50; c++) {
    const crew = `crew-${String(c + 1).padStart(2, "0")}`;
    const fam = byFamily.get(families[c % families.length]!)!;
    const alt = byFamily.get(families[(c * 3 + 1) % families.length]!)!;
    addCrew(
      { agents, crews },
      crew,
      { toolers: 5, analysts: 4 },
      {
        coordinator: pairOf(fam[3]!.name, alt[3]!.name, [95, 87]),
        // One draw per tooler, in tooler order: the seeded structure stays as it was.
        tooler: () => {
          const pick = rng.chance(0.5) ? 0 : 1;
          return pairOf(fam[pick]!.name, alt[pick]!.name, [80, 72]);
        },
        analyst: pairOf(fam[2]!.name, alt[2]!.name, [85, 77]),
      },
    );
  }
  const gpus: ScenarioGpu[] = [];
  const pad = (n: number) => String(n).padStart(2, "0");
  for (let i = 1; i <= 8; i++) gpus.push({ name: `h100-80g-${pad(i)}`, vramMiB: 80 * GiB });
  for (let i = 1; i <= 16; i++) gpus.push({ name: `a100-40g-${pad(i)}`, vramMiB: 40 * GiB });
  for (let i = 1; i <= 40; i++) gpus.push({ name: `l4-24g-${pad(i)}`, vramMiB: 24 * GiB });
  return {
    name: "scale",
    description: "64 GPUs (8×80, 16×40, 40×24 GiB), 2 slots; 40 models; 50 crews, 500 agents",
    gpus,
    numParallel: slots,
    contextLength: 8192,
    models,
    agents,
    crews,
    discussionsPerHour: 1000,
    arrivalWindowS: 20 * 60,
    ...CALL_SHAPE,
  };
}

// ── mixed ────────────────────────────────────────────────────────────────────────────────────

/**
 * A mixed fleet (docs/rules/engines.md "Placement"): an RTX 4090 running Ollama (one slot;
 * qwen3 8b and 14b, both fit at once) beside an L40S running vLLM that serves Qwen/Qwen3-14B
 * (16 sequences at once, a 98304-token KV cache, each request slowed 10% per other one running).
 * Two crews whose candidate lists name both engines: coordinators prefer the Ollama 14b with the
 * vLLM 14b as alternate, toolers the Ollama 8b with the vLLM 14b, analysts the vLLM 14b with the
 * Ollama 14b. A call is the same work on either engine (10 s for a 14b alone). Rate: 60
 * discussions an hour for two hours: the Ollama card alone would be busy ~2/3 of the time with
 * the work that prefers it, with queues at the bursts.
 */
export function mixed(): Scenario {
  const VLLM_14B = "Qwen/Qwen3-14B";
  const models: ScenarioModel[] = [
    { name: "qwen3:14b", footprintMiB: 12224, serviceMeanS: 10 },
    { name: "qwen3:8b", footprintMiB: 5979, serviceMeanS: 5 },
    // Served by the vLLM engine only (its VRAM is its own: the footprint is never used).
    { name: VLLM_14B, footprintMiB: 0, serviceMeanS: 10 },
  ];
  const agents: ScenarioAgent[] = [];
  const crews: ScenarioCrew[] = [];
  for (const crew of ["alpha", "beta"]) {
    addCrew(
      { agents, crews },
      crew,
      { toolers: 4, analysts: 2 },
      {
        coordinator: pairOf("qwen3:14b", VLLM_14B, [90, 88]),
        tooler: pairOf("qwen3:8b", VLLM_14B, [80, 76]),
        analyst: pairOf(VLLM_14B, "qwen3:14b", [85, 83]),
      },
    );
  }
  return {
    name: "mixed",
    description: "RTX 4090 on Ollama (1 slot) + L40S on vLLM (Qwen3-14B, 16 seqs); 2 crews of 7",
    gpus: [
      { name: "ollama-4090", vramMiB: 24563 },
      {
        name: "vllm-l40s",
        vramMiB: 46068,
        fixed: { engine: "vllm", serves: [VLLM_14B], slots: 16, kvTokens: 98304, slowdown: 0.1 },
      },
    ],
    numParallel: 1,
    contextLength: 8192,
    models,
    agents,
    crews,
    discussionsPerHour: 60,
    arrivalWindowS: 2 * 3600,
    ...CALL_SHAPE,
  };
}
