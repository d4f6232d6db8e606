// sim — scheduling quality (docs/benchmarks.md `sim`): every scenario × policy × seed on the
// discrete-event simulation (src/sim), whose ours and kubemoot policies run the sidecar's own call
// loop (src/scheduler: place, wait, replan, claim) in virtual time against simulated Ollama GPUs. Writes bench/results/sim.json ({...runInfo, rows,
// summary, verdict}), sim.md (the tables) and sim.svg (latency CDFs per policy and scenario).
// Everything but decision_us_* is virtual-time and deterministic for the seeds.
//
// Flags: --seeds=1,2,3  --scenarios=homelab,lab,scale  --experiments (adds "ours" variants
// that quantify the src/core changes recommended in the report).
import { writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import {
  POLICIES,
  type PolicyName,
  SCENARIOS,
  type SimMetrics,
  type SimOptions,
  scenarioByName,
  simulate,
} from "../../src/sim/index.js";
import { markdownTable, repoRoot, runInfo, writeResult } from "../lib/report.js";
import { type Panel, renderSvg } from "./svg.js";

const DEFAULT_SEEDS = [1, 2, 3];

type Row = SimMetrics & { p95_over_ideal: number };

interface Summary {
  scenario: string;
  policy: string;
  seeds: number;
  latency_mean_s: number;
  latency_p95_s: number;
  latency_p99_s: number;
  /** Mean over seeds of the p95 over every arrival (a call not answered counts as never); null when a seed had none. */
  latency_p95_arrivals_s: number | null;
  late_calls: number;
  gib_loaded: number;
  loads: number;
  evictions: number;
  stand_asides: Record<string, number>;
  gpu_busy_fraction: number;
  decision_us_p50: number;
  decision_us_p99: number;
  ideal_p95_s: number;
  p95_over_ideal: number;
  /** Agent-loop scenarios: means over seeds of TTFT p50/p95 and of the prompt-cache reuse captured. */
  prompt_cache?: { ttft_p50_s: number; ttft_p95_s: number; captured_share: number };
}

interface Verdict {
  scenario: string;
  /** Against the baselines (static, round-robin, least-busy, random). */
  ours_lowest_p95: boolean;
  ours_fewest_gib_loaded: boolean;
  /** The best other policy on each measure. */
  best_other_p95: { policy: string; latency_p95_s: number };
  best_other_gib: { policy: string; gib_loaded: number };
  ours_p95_over_ideal: number;
  /** ours − best other (s; negative = ours lower). */
  ours_p95_delta_s: number;
  /** ours − best other (GiB; negative = ours fewer). */
  ours_gib_delta: number;
  /**
   * The default policy against Kubemoot's weighted cost (the sidecar with
   * KUBEMOOT_POLICY=kubemoot): deltas ours − kubemoot, on completed calls and on every arrival.
   */
  vs_kubemoot: {
    p95_delta_s: number;
    p95_arrivals_delta_s: number | null;
    gib_delta: number;
    /** p95 (completed and arrivals) no higher and GiB loaded no more. */
    no_worse: boolean;
    /** No worse, and strictly lower on p95 or on GiB loaded. */
    strictly_better: boolean;
  };
}

function listArg(args: readonly string[], name: string): string[] | undefined {
  for (const a of args) {
    const m = new RegExp(`^--${name}=(.+)$`).exec(a);
    if (m) return m[1]!.split(",").map((s) => s.trim());
  }
  return undefined;
}

function r3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}

function avg(xs: readonly number[]): number {
  return xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function summarize(scenario: string, policy: string, rows: readonly Row[]): Summary {
  const pick = (f: (r: Row) => number) => r3(avg(rows.map(f)));
  const sa: Record<string, number> = {};
  for (const k of Object.keys(rows[0]?.stand_asides ?? {}) as (keyof SimMetrics["stand_asides"])[]) {
    sa[k] = pick((r) => r.stand_asides[k]);
  }
  const arrivals = rows.map((r) => r.latency_p95_arrivals_s);
  const caches = rows.flatMap((r) => (r.prompt_cache !== undefined ? [r.prompt_cache] : []));
  const cache =
    caches.length === rows.length && rows.length > 0
      ? {
          prompt_cache: {
            ttft_p50_s: r3(avg(caches.map((c) => c.ttft_p50_s))),
            ttft_p95_s: r3(avg(caches.map((c) => c.ttft_p95_s))),
            captured_share: r3(avg(caches.map((c) => c.captured_share))),
          },
        }
      : {};
  return {
    scenario,
    policy,
    seeds: rows.length,
    latency_mean_s: pick((r) => r.latency_mean_s),
    latency_p95_s: pick((r) => r.latency_p95_s),
    latency_p99_s: pick((r) => r.latency_p99_s),
    latency_p95_arrivals_s: arrivals.some((x) => x === null) ? null : r3(avg(arrivals as number[])),
    late_calls: pick((r) => r.late_calls),
    gib_loaded: pick((r) => r.gib_loaded),
    loads: pick((r) => r.loads),
    evictions: pick((r) => r.evictions),
    stand_asides: sa,
    gpu_busy_fraction: pick((r) => r.gpu_busy_fraction),
    decision_us_p50: pick((r) => r.decision_us_p50),
    decision_us_p99: pick((r) => r.decision_us_p99),
    ideal_p95_s: pick((r) => r.ideal_p95_s),
    p95_over_ideal: pick((r) => r.p95_over_ideal),
    ...cache,
  };
}

function verdictOf(scenario: string, summaries: readonly Summary[]): Verdict {
  const ours = summaries.find((s) => s.policy === "ours")!;
  const kubemoot = summaries.find((s) => s.policy === "kubemoot")!;
  const others = summaries.filter((s) => s.policy !== "ours" && s.policy !== "kubemoot");
  const arrivalsDelta =
    ours.latency_p95_arrivals_s === null || kubemoot.latency_p95_arrivals_s === null
      ? null
      : r3(ours.latency_p95_arrivals_s - kubemoot.latency_p95_arrivals_s);
  const noWorse =
    ours.latency_p95_s <= kubemoot.latency_p95_s &&
    ours.gib_loaded <= kubemoot.gib_loaded &&
    arrivalsDelta !== null &&
    arrivalsDelta <= 0;
  const strictly =
    noWorse && (ours.latency_p95_s < kubemoot.latency_p95_s || ours.gib_loaded < kubemoot.gib_loaded);
  const bestP95 = others.reduce((a, b) => (b.latency_p95_s < a.latency_p95_s ? b : a));
  const bestGib = others.reduce((a, b) => (b.gib_loaded < a.gib_loaded ? b : a));
  return {
    scenario,
    ours_lowest_p95: ours.latency_p95_s <= bestP95.latency_p95_s,
    ours_fewest_gib_loaded: ours.gib_loaded <= bestGib.gib_loaded,
    best_other_p95: { policy: bestP95.policy, latency_p95_s: bestP95.latency_p95_s },
    best_other_gib: { policy: bestGib.policy, gib_loaded: bestGib.gib_loaded },
    ours_p95_over_ideal: ours.p95_over_ideal,
    ours_p95_delta_s: r3(ours.latency_p95_s - bestP95.latency_p95_s),
    ours_gib_delta: r3(ours.gib_loaded - bestGib.gib_loaded),
    vs_kubemoot: {
      p95_delta_s: r3(ours.latency_p95_s - kubemoot.latency_p95_s),
      p95_arrivals_delta_s: arrivalsDelta,
      gib_delta: r3(ours.gib_loaded - kubemoot.gib_loaded),
      no_worse: noWorse,
      strictly_better: strictly,
    },
  };
}

/** Planner variants that quantify possible src/core changes (see the report). */
function experiments(): Array<{ name: string; options: Partial<SimOptions> & { policy?: PolicyName } }> {
  return [
    { name: "ours+overlay-superseded", options: { overlaySupersededByProbe: true } },
    { name: "ours (no OLLAMA_MAX_LOADED_MODELS cap, bound)", options: { maxLoadedModels: 0 } },
    { name: "ours (the cap not published)", options: { publishMaxLoadedModels: false } },
  ];
}

export async function run(args: string[]): Promise<void> {
  const seeds = (listArg(args, "seeds") ?? DEFAULT_SEEDS.map(String)).map(Number);
  const scenarios = listArg(args, "scenarios") ?? Object.keys(SCENARIOS);
  const withExperiments = args.includes("--experiments");
  process.stdout.write(`seeds ${seeds.join(", ")}; scenarios ${scenarios.join(", ")}\n`);
  const started = performance.now();

  // Warm the JIT so that decision_us reflects steady-state decisions, not compilation.
  for (const name of ["homelab", "lab"])
    await simulate({ scenario: scenarioByName(name), policy: "ours", seed: 0 });

  const rows: Row[] = [];
  const summary: Summary[] = [];
  const verdict: Verdict[] = [];
  const panels: Panel[] = [];
  for (const name of scenarios) {
    const perPolicy: Summary[] = [];
    const panel: Panel = { title: "", series: [] };
    let ideal: number[] = [];
    for (const policy of POLICIES) {
      const mine: Row[] = [];
      let pooled: number[] = [];
      for (const seed of seeds) {
        const res = await simulate({ scenario: scenarioByName(name), policy: policy as PolicyName, seed });
        const m = res.metrics;
        const row: Row = { ...m, p95_over_ideal: r3(m.latency_p95_s / m.ideal_p95_s) };
        rows.push(row);
        mine.push(row);
        pooled = pooled.concat(res.latencies);
        if (policy === "ours") ideal = ideal.concat(res.ideal);
      }
      const s = summarize(name, policy, mine);
      perPolicy.push(s);
      summary.push(s);
      panel.series.push({ label: policy, sorted: pooled.sort((a, b) => a - b) });
    }
    panel.series.push({ label: "ideal", sorted: ideal.sort((a, b) => a - b), dashed: true });
    panel.title = `${name} — ${scenarioByName(name).description}`;
    panels.push(panel);
    verdict.push(verdictOf(name, perPolicy));
  }

  const experimentRows: Summary[] = [];
  if (withExperiments) {
    for (const name of scenarios) {
      for (const ex of experiments()) {
        const mine: Row[] = [];
        for (const seed of seeds) {
          const run = {
            scenario: scenarioByName(name),
            seed,
            ...ex.options,
            policy: ex.options.policy ?? "ours",
          };
          const m = (await simulate(run)).metrics;
          mine.push({ ...m, p95_over_ideal: r3(m.latency_p95_s / m.ideal_p95_s) });
        }
        experimentRows.push(summarize(name, ex.name, mine));
      }
    }
  }

  const result: Record<string, unknown> = {
    ...runInfo(seeds[0] ?? null),
    seeds,
    rows,
    summary,
    verdict,
  };
  if (withExperiments) result.experiments = experimentRows;
  const file = writeResult("sim", result);

  const flat = (s: Summary) => ({
    scenario: s.scenario,
    policy: s.policy,
    mean_s: s.latency_mean_s,
    p95_s: s.latency_p95_s,
    p99_s: s.latency_p99_s,
    p95_arrivals_s: s.latency_p95_arrivals_s ?? "—",
    late: s.late_calls,
    "p95/ideal": s.p95_over_ideal,
    gib_loaded: s.gib_loaded,
    loads: s.loads,
    evictions: s.evictions,
    stand_asides: Object.values(s.stand_asides).reduce((a, b) => a + b, 0),
    gpu_busy: s.gpu_busy_fraction,
    dec_us_p50: s.decision_us_p50,
    dec_us_p99: s.decision_us_p99,
    ttft_p50_s: s.prompt_cache?.ttft_p50_s ?? "—",
    cache_captured: s.prompt_cache?.captured_share ?? "—",
  });
  const table = markdownTable(summary.map(flat));
  const verdictLines = verdict.map(
    (v) =>
      `- ${v.scenario}: lowest p95 ${v.ours_lowest_p95 ? "yes" : "no"} (best other ${v.best_other_p95.policy} ` +
      `${v.best_other_p95.latency_p95_s} s, ours ${signed(v.ours_p95_delta_s)} s); ` +
      `fewest GiB loaded ${v.ours_fewest_gib_loaded ? "yes" : "no"} (best other ${v.best_other_gib.policy} ` +
      `${v.best_other_gib.gib_loaded}, ours ${signed(v.ours_gib_delta)}); ` +
      `ours p95/ideal ${v.ours_p95_over_ideal}; against kubemoot: p95 ${signed(v.vs_kubemoot.p95_delta_s)} s ` +
      `(every arrival ${v.vs_kubemoot.p95_arrivals_delta_s === null ? "—" : signed(v.vs_kubemoot.p95_arrivals_delta_s)} s), ` +
      `GiB ${signed(v.vs_kubemoot.gib_delta)}: ${v.vs_kubemoot.strictly_better ? "strictly better" : v.vs_kubemoot.no_worse ? "no worse" : "WORSE"}`,
  );
  const md = [
    "# sim — scheduling quality",
    "",
    `Seeds ${seeds.join(", ")} (averaged per scenario × policy); node ${process.version}; ${runInfo().machine.cpu_model}.`,
    "Latency is arrival → completion of a call (waits and loads included), in virtual seconds;",
    "ideal = service time alone. p95 counts completed calls; p95_arrivals counts every call that",
    "arrived, one that stood aside counting as never answered; late = completed after the 90 s wait",
    "limit. ours and kubemoot run the production call loop (src/scheduler's Scheduler, one per agent,",
    "configured by KUBEMOOT_* as a sidecar is, over a simulated shared store): ours = the sidecar's",
    "default policy (expected seconds); kubemoot = KUBEMOOT_POLICY=kubemoot (the weighted cost).",
    "decision_us is the wall-clock cost of one decision (demand aggregation, index and plan for the",
    "planners, the pick for baselines), the only wall-clock figure.",
    "",
    table,
    "",
    "Verdict (ours vs the best baseline, and vs kubemoot):",
    "",
    ...verdictLines,
    "",
  ];
  if (withExperiments) {
    md.push("Experiments (ours variants, see the report):", "", markdownTable(experimentRows.map(flat)), "");
  }
  md.push(
    "Per run:",
    "",
    markdownTable(
      rows.map(({ prompt_cache: _cache, ...r }) => ({ ...r, stand_asides: JSON.stringify(r.stand_asides) })),
    ),
    "",
  );
  const dir = path.join(repoRoot, "bench", "results");
  writeFileSync(path.join(dir, "sim.md"), md.join("\n"));
  writeFileSync(
    path.join(dir, "sim.svg"),
    renderSvg(panels, `Latency CDF per policy, seeds ${seeds.join(", ")} pooled; dashed: service time alone`),
  );

  process.stdout.write(`${table}\n\n${verdictLines.join("\n")}\n\n`);
  if (withExperiments) process.stdout.write(`${markdownTable(experimentRows.map(flat))}\n\n`);
  process.stdout.write(
    `wrote ${file}, sim.md and sim.svg in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
}
