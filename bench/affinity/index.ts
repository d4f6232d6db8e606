// affinity — prompt-cache-aware placement on agent loops (docs/benchmarks.md `affinity`,
// docs/rules/placement.md §5.5): multi-turn tool loops (src/sim/agent-loops.ts) on Ollama cards
// that keep a prompt cache per slot (the emulator's own model, src/emulator/prompt-cache.ts) in
// the simulation's virtual time, the sidecar's call loop placing each turn. Compared in one run:
// ours with affinity, ours told nothing of the conversations, Kubemoot's weighted policy,
// round-robin and least-busy. Reports per policy TTFT p50/p95, prefill seconds and the share of
// the available reuse captured (available = what an unbounded cache anywhere could have reused),
// and writes bench/results/affinity.json with its `targets`.
//
// Flags: --seeds=1,2,3,4,5
import { performance } from "node:perf_hooks";
import {
  agentLoopScenario,
  type CallRecord,
  LOOP_SHAPE,
  type PolicyName,
  type PromptRecord,
  type Scenario,
  scenarioByName,
  simulate,
} from "../../src/sim/index.js";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";

const DEFAULT_SEEDS = [1, 2, 3, 4, 5];
const POLICIES: PolicyName[] = ["ours", "ours-no-affinity", "kubemoot", "round-robin", "least-busy"];
/** The TTFT target is on turns whose prompt is at least this long (tokens). */
const LONG_PROMPT = 20_000;

/** The traces: crews of 4–16 agents, 5–40 turns, contexts growing from 2k to 8k–30k tokens. */
function traces(): Scenario[] {
  const trace = (
    name: string,
    description: string,
    prefill: number[],
    crews: number,
    turns: [number, number],
    context: [number, number],
  ) =>
    agentLoopScenario({
      name,
      description,
      prefill,
      crews,
      agentsPerCrew: 4,
      loops: {
        ...LOOP_SHAPE,
        turnsMin: turns[0],
        turnsMax: turns[1],
        contextMin: context[0],
        contextMax: context[1],
      },
    });
  return [
    trace(
      "crew-4-to-12k",
      "one crew of 4 agents, 5-20 turns to 8k-12k tokens, 2 cards",
      [6000, 3000],
      1,
      [5, 20],
      [8000, 12000],
    ),
    trace(
      "crews-8-to-24k",
      "two crews of 4, 10-30 turns to 20k-24k tokens, 3 cards",
      [6000, 4000, 2500],
      2,
      [10, 30],
      [20000, 24000],
    ),
    trace(
      "crews-16-to-30k",
      "four crews of 4, 10-40 turns to 20k-30k tokens, 4 cards",
      [8000, 6000, 4000, 2000],
      4,
      [10, 40],
      [20000, 30000],
    ),
  ];
}

function listArg(args: readonly string[], name: string): string[] | undefined {
  for (const a of args) {
    const m = new RegExp(`^--${name}=(.+)$`).exec(a);
    if (m) return m[1]!.split(",").map((s) => s.trim());
  }
  return undefined;
}

const r3 = (n: number) => Math.round(n * 1000) / 1000;
const median = (xs: readonly number[]) => percentile(xs, 50);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** The completed turns of a run, with their prompt records. */
function turnsOf(calls: readonly CallRecord[] | undefined): PromptRecord[] {
  return (calls ?? []).flatMap((c) => (c.outcome === "done" && c.prompt !== undefined ? [c.prompt] : []));
}

interface Cell {
  trace: string;
  policy: PolicyName;
  seed: number;
  turns: PromptRecord[];
  /** Calls that did not complete (stood aside or unfinished). */
  lost: number;
}

interface PolicyRow {
  trace: string;
  policy: string;
  ttft_p50_s: number;
  ttft_p95_s: number;
  /** TTFT p50 of the turns whose prompt is at least LONG_PROMPT tokens (null when none). */
  ttft_p50_long_s: number | null;
  /** Mean over seeds of the seconds engines spent on prompts. */
  prefill_s: number;
  captured_share: number;
  /** Min and max over seeds of the captured share. */
  captured_range: [number, number];
  lost_calls: number;
}

function rowOf(trace: string, policy: PolicyName, cells: readonly Cell[]): PolicyRow {
  const all = cells.flatMap((c) => c.turns);
  const ttft = all.map((t) => t.ttftMs / 1000);
  const long = all.filter((t) => t.tokens >= LONG_PROMPT).map((t) => t.ttftMs / 1000);
  const shares = cells.map((c) => share(c.turns));
  return {
    trace,
    policy,
    ttft_p50_s: r3(median(ttft)),
    ttft_p95_s: r3(percentile(ttft, 95)),
    ttft_p50_long_s: long.length > 0 ? r3(median(long)) : null,
    prefill_s: r3(sum(cells.map((c) => sum(c.turns.map((t) => t.prefillMs)) / 1000)) / cells.length),
    captured_share: r3(share(all)),
    captured_range: [r3(Math.min(...shares)), r3(Math.max(...shares))],
    lost_calls: sum(cells.map((c) => c.lost)),
  };
}

function share(turns: readonly PromptRecord[]): number {
  const available = sum(turns.map((t) => t.availableTokens));
  return available > 0 ? sum(turns.map((t) => t.cachedTokens)) / available : 1;
}

async function runCell(sc: Scenario, policy: PolicyName, seed: number): Promise<Cell> {
  const res = await simulate({ scenario: sc, policy, seed, record: true, measure: false });
  const turns = turnsOf(res.calls);
  return { trace: sc.name, policy, seed, turns, lost: res.metrics.calls - res.metrics.completed };
}

/** Policies best first by TTFT p50, then by captured share. */
function ordering(rows: readonly PolicyRow[]): string[] {
  return [...rows]
    .sort((a, b) => a.ttft_p50_s - b.ttft_p50_s || b.captured_share - a.captured_share)
    .map((r) => r.policy);
}

export async function run(args: string[]): Promise<void> {
  const seeds = (listArg(args, "seeds") ?? DEFAULT_SEEDS.map(String)).map(Number);
  const started = performance.now();
  const rows: PolicyRow[] = [];
  const cells: Cell[] = [];
  for (const sc of traces()) {
    for (const policy of POLICIES) {
      const mine: Cell[] = [];
      for (const seed of seeds) mine.push(await runCell(sc, policy, seed));
      cells.push(...mine);
      rows.push(rowOf(sc.name, policy, mine));
    }
  }

  // Captured reuse, ours with affinity, over every trace and seed (and its range over the runs).
  const ours = cells.filter((c) => c.policy === "ours");
  const captured = share(ours.flatMap((c) => c.turns));
  const capturedPerRun = ours.map((c) => share(c.turns));
  // TTFT p50 speedup on the long turns, per (trace, seed) with long turns in both runs.
  const speedups: number[] = [];
  for (const c of ours) {
    const twin = cells.find(
      (x) => x.policy === "ours-no-affinity" && x.trace === c.trace && x.seed === c.seed,
    );
    const mineLong = c.turns.filter((t) => t.tokens >= LONG_PROMPT).map((t) => t.ttftMs);
    const theirLong = (twin?.turns ?? []).filter((t) => t.tokens >= LONG_PROMPT).map((t) => t.ttftMs);
    if (mineLong.length > 0 && theirLong.length > 0) speedups.push(median(theirLong) / median(mineLong));
  }
  const speedup = median(speedups);
  // p95 with / without affinity, per trace (seeds pooled): the worst.
  const p95Ratios = traces().map((sc) => {
    const a = rows.find((r) => r.trace === sc.name && r.policy === "ours")!;
    const b = rows.find((r) => r.trace === sc.name && r.policy === "ours-no-affinity")!;
    return { trace: sc.name, ratio: r3(a.ttft_p95_s / b.ttft_p95_s) };
  });
  const worstP95 = Math.max(...p95Ratios.map((p) => p.ratio));

  // The same comparison in bench sim's agent-loops scenario.
  const simScenario = scenarioByName("agent-loops");
  const simRows: PolicyRow[] = [];
  for (const policy of POLICIES) {
    const mine: Cell[] = [];
    for (const seed of seeds) mine.push(await runCell(simScenario, policy, seed));
    simRows.push(rowOf(simScenario.name, policy, mine));
  }
  const pooled = POLICIES.map((policy) => {
    const mine = cells.filter((c) => c.policy === policy);
    return rowOf("all traces", policy, mine);
  });
  const benchOrder = ordering(pooled);
  const simOrder = ordering(simRows);
  const aheadOfNoAffinity = (order: string[]) => order.indexOf("ours") < order.indexOf("ours-no-affinity");

  const targets = {
    cache_reuse_captured_share: {
      value: r3(captured),
      goal: ">= 0.97",
      met: captured >= 0.97,
      range: [r3(Math.min(...capturedPerRun)), r3(Math.max(...capturedPerRun))],
    },
    ttft_p50_speedup_vs_no_affinity: {
      value: r3(speedup),
      goal: `>= 3 (TTFT p50 of turns of ${LONG_PROMPT} tokens or more, without / with affinity)`,
      met: speedup >= 3,
      range: [r3(Math.min(...speedups)), r3(Math.max(...speedups))],
      runs: speedups.length,
    },
    p95_not_worse_any_trace: {
      value: worstP95,
      goal: "<= 1.0 (worst over traces of TTFT p95 with / without affinity)",
      met: worstP95 <= 1,
      per_trace: p95Ratios,
    },
    same_ordering_in_sim: {
      value: { bench: benchOrder, sim: simOrder },
      goal: "ours ahead of ours without affinity in both",
      met: aheadOfNoAffinity(benchOrder) && aheadOfNoAffinity(simOrder),
    },
  };
  const result = {
    ...runInfo(seeds[0] ?? null),
    seeds,
    long_prompt_tokens: LONG_PROMPT,
    traces: traces().map((t) => ({ name: t.name, description: t.description, loops: t.loops })),
    targets,
    rows,
    pooled,
    sim: simRows,
  };
  const file = writeResult("affinity", result);
  const flat = (r: PolicyRow) => ({ ...r, captured_range: r.captured_range.join("–") });
  process.stdout.write(
    `${markdownTable(rows.map(flat))}\n\nall traces:\n\n${markdownTable(pooled.map(flat))}\n\n`,
  );
  process.stdout.write(`bench sim's agent-loops:\n\n${markdownTable(simRows.map(flat))}\n\n`);
  for (const [name, t] of Object.entries(targets)) {
    process.stdout.write(
      `- ${name}: ${JSON.stringify(t.value)} (goal ${t.goal}): ${t.met ? "met" : "NOT met"}\n`,
    );
  }
  process.stdout.write(`wrote ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}
