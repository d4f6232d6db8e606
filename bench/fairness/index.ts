// bench fairness — fair share across crews, fleet-wide (docs/rules/fairness.md, docs/benchmarks.md):
// real sidecar processes of several crews on one nats-server call one emulated card with two
// slots through their Ollama proxies, always waiting (closed loops), fair share on and off in
// the same run. Service per crew is counted by this client from the engine's answers
// (prompt_eval_count + 2 × eval_count) over a measured window after a warm-up.
//
// Scenarios: pod skew (8 pods vs 1, each pod 2 loops), the same skew spread over 1 and 4 sidecar
// processes per crew, weights 1:2:4, a crew asking for less than its share, interactive calls
// under a batch flood. Window: BENCH_FAIRNESS_WINDOW_S (45 s; the 60 s fits in
// `npm run bench -- fairness` only just over ten minutes).

import { jainIndex } from "../../src/core/index.js";
import {
  type CallRecord,
  type CrewSpec,
  crewWait,
  type FairCard,
  measureWindow,
  startCrews,
  startFairCard,
  tokensByCrew,
} from "../../test/helpers/fair-crews.js";
import { markdownTable, runInfo, writeResult } from "../lib/report.js";

const WINDOW_MS = Number(process.env.BENCH_FAIRNESS_WINDOW_S ?? 45) * 1000;
const WARMUP_MS = 5_000;
/** Emulated: 64 tokens at 200 tokens/s, at half speed: a call takes about 0.6 s of wall time. */
const CARD = { slots: 2, timeScale: 2, tokensPerS: 200 };
const OUTPUT_TOKENS = 64;

interface Run {
  label: string;
  fair: boolean;
  crews: CrewSpec[];
}

interface Measured {
  label: string;
  fair: boolean;
  tokens: Record<string, number>;
  calls: number;
  callsPerS: number;
  tokensPerS: number;
  records: CallRecord[];
}

async function measure(card: FairCard, r: Run): Promise<Measured> {
  const run = await startCrews(card, r.crews, { fair: r.fair, outputTokens: OUTPUT_TOKENS });
  const { from, to } = await measureWindow(WARMUP_MS, WINDOW_MS);
  await run.stop();
  const inWindow = run.records.filter((x) => x.status === 200 && x.endedAt >= from && x.endedAt < to);
  const failed = run.records.filter((x) => x.status !== 200);
  if (failed.length > 0) {
    const first = failed[0]!;
    process.stdout.write(
      `  ${r.label}: ${failed.length} calls failed, the first ${first.status} ${first.error}\n`,
    );
  }
  const byCrew = tokensByCrew(run.records, from, to);
  const seconds = (to - from) / 1000;
  const total = [...byCrew.values()].reduce((a, b) => a + b, 0);
  const m: Measured = {
    label: r.label,
    fair: r.fair,
    tokens: Object.fromEntries(r.crews.map((c) => [c.name, byCrew.get(c.name) ?? 0])),
    calls: inWindow.length,
    callsPerS: round(inWindow.length / seconds),
    tokensPerS: round(total / seconds),
    records: inWindow,
  };
  process.stdout.write(`  ${r.label}: ${JSON.stringify(m.tokens)} ${m.callsPerS} calls/s\n`);
  return m;
}

function round(x: number, d = 3): number {
  const k = 10 ** d;
  return Math.round(x * k) / k;
}

/** Jain's index of per-crew tokens over weight. */
function jain(m: Measured, weights: Record<string, number> = {}): number {
  return round(jainIndex(Object.entries(m.tokens).map(([crew, t]) => t / (weights[crew] ?? 1))));
}

/** The largest relative error of each crew's share against its weight's share. */
function shareError(m: Measured, weights: Record<string, number>): number {
  const total = Object.values(m.tokens).reduce((a, b) => a + b, 0);
  const wsum = Object.values(weights).reduce((a, b) => a + b, 0);
  let worst = 0;
  for (const [crew, w] of Object.entries(weights)) {
    const want = w / wsum;
    worst = Math.max(worst, Math.abs((m.tokens[crew] ?? 0) / total - want) / want);
  }
  return round(worst);
}

/** p95 queue wait of a crew's calls over their mean service time. */
function waitOverService(m: Measured, crew: string): number {
  const w = crewWait(m.records, crew);
  return round(w.p95WaitMs / w.serviceMs);
}

const pod = (name: string, sidecars: number, loops: number, extra: Partial<CrewSpec> = {}): CrewSpec => ({
  name,
  sidecars,
  loops,
  ...extra,
});

export async function run(): Promise<void> {
  // Each run's crews are new ones (s1-a, s1-b, then s2-a, ...): service attained in one run
  // (60 s half-life) must not carry into the next.
  let runs = 0;
  const crewsOf = (...names: string[]) => {
    runs++;
    return names.map((n) => `s${runs}-${n}`);
  };
  const card = await startFairCard(CARD);
  try {
    // Pod skew: 8 pods against 1, two loops each: without fair share the freed slot goes to the
    // faster claim, so about 8:1.
    const skew = (fair: boolean): Run => {
      const [a, b] = crewsOf("a", "b");
      return {
        label: `pod skew 8:1, fair ${fair ? "on" : "off"}`,
        fair,
        crews: [pod(a!, 8, 16), pod(b!, 1, 2)],
      };
    };
    const skewOff = await measure(card, skew(false));
    const skewOn = await measure(card, skew(true));
    // The same offered load from 1 and 4 sidecar processes per crew (8 is the pod-skew run).
    const spread = async (k: number) => {
      const [a, b] = crewsOf("a", "b");
      return measure(card, {
        label: `skew 8:1 over ${k} sidecar(s) per crew, fair on`,
        fair: true,
        crews: [pod(a!, k, 16), pod(b!, Math.min(k, 2), 2)],
      });
    };
    const spread1 = await spread(1);
    const spread4 = await spread(4);
    // Weights 1:2:4, every crew backlogged.
    const weighted = (fair: boolean) => {
      const [a, b, c] = crewsOf("a", "b", "c");
      const weights: Record<string, number> = { [a!]: 1, [b!]: 2, [c!]: 4 };
      const run: Run = {
        label: `weights 1:2:4, fair ${fair ? "on" : "off"}`,
        fair,
        crews: Object.entries(weights).map(([name, weight]) => pod(name, 2, 4, { weight })),
      };
      return { weights, run };
    };
    const wOff = weighted(false);
    const weightsOff = await measure(card, wOff.run);
    const wOn = weighted(true);
    const weightsOn = await measure(card, wOn.run);
    // Max-min: the light crew asks for less than its half (one loop that pauses a call's time).
    const [ma, mb] = crewsOf("a", "b");
    const maxMin = await measure(card, {
      label: "max-min: a light crew asks for ~1/3 of the card, fair on",
      fair: true,
      crews: [pod(ma!, 8, 16), pod(mb!, 1, 1, { thinkMs: 600 })],
    });
    // Bands: a batch flood, and an interactive crew calling now and then.
    const bands = (fair: boolean): Run => {
      const [a, b] = crewsOf("a", "b");
      return {
        label: `interactive under a batch flood, fair ${fair ? "on" : "off"}`,
        fair,
        crews: [
          pod(a!, 8, 16, { priority: "batch" }),
          pod(b!, 1, 1, { priority: "interactive", thinkMs: 1000 }),
        ],
      };
    };
    const bandsOff = await measure(card, bands(false));
    const bandsOn = await measure(card, bands(true));

    const light = maxMin.records.filter((r) => r.crew === mb);
    const asked = WINDOW_MS / 1000 / (0.6 + meanServiceS(light));
    const targets = {
      jain_index_pod_skew: target(jain(skewOn), 0.95, ">=", jain(skewOff)),
      weighted_share_max_error: target(
        shareError(weightsOn, wOn.weights),
        0.1,
        "<=",
        shareError(weightsOff, wOff.weights),
      ),
      interactive_wait_p95_over_service: target(
        waitOverService(bandsOn, second(bandsOn)),
        1.0,
        "<=",
        waitOverService(bandsOff, second(bandsOff)),
      ),
      throughput_vs_fairness_off: target(round(skewOn.tokensPerS / skewOff.tokensPerS), 0.97, ">=", 1),
      fleet_wide_8_sidecars: target(jain(skewOn), 0.95, ">=", jain(skewOff)),
    };
    const all = [skewOff, skewOn, spread1, spread4, weightsOff, weightsOn, maxMin, bandsOff, bandsOn];
    const rows = all.map((m) => ({
      run: m.label,
      tokens_by_crew: Object.values(m.tokens).join(" / "),
      jain_over_weight: jain(m, m === weightsOn ? wOn.weights : m === weightsOff ? wOff.weights : {}),
      calls_per_s: m.callsPerS,
      tokens_per_s: m.tokensPerS,
    }));
    const result = {
      window_s: WINDOW_MS / 1000,
      warmup_s: WARMUP_MS / 1000,
      card: { ...CARD, output_tokens: OUTPUT_TOKENS },
      targets,
      fleet_wide_jain_by_sidecars_per_crew: { 1: jain(spread1), 4: jain(spread4), 8: jain(skewOn) },
      max_min: {
        light_crew_calls: light.length,
        light_crew_calls_if_never_waiting: round(asked, 1),
        light_crew_served_ratio: round(light.length / asked),
        light_crew_wait_p95_over_service: waitOverService(maxMin, mb!),
      },
      throughput: {
        calls_per_s_on: skewOn.callsPerS,
        calls_per_s_off: skewOff.callsPerS,
        calls_ratio: round(skewOn.callsPerS / skewOff.callsPerS),
        tokens_ratio: round(skewOn.tokensPerS / skewOff.tokensPerS),
      },
      runs: rows,
    };
    writeResult("fairness", { ...runInfo(null), ...result });
    process.stdout.write(`${markdownTable(rows)}\n`);
    process.stdout.write(`targets: ${JSON.stringify(targets)}\n`);
  } finally {
    await card.close();
  }
}

/** The crew listed second in a run (the light or interactive one). */
function second(m: Measured): string {
  return Object.keys(m.tokens)[1]!;
}

function meanServiceS(rs: readonly CallRecord[]): number {
  return rs.length === 0 ? 0 : rs.reduce((a, r) => a + r.serviceMs, 0) / rs.length / 1000;
}

function target(value: number, goal: number, op: ">=" | "<=", baseline: number) {
  return { value, goal, met: op === ">=" ? value >= goal : value <= goal, baseline_fairness_off: baseline };
}
