// fleet — the cost of one fleet reconcile (docs/rules/fleet.md): 1,000 ModelDeployments over a
// seeded synthetic fleet of clusters × 8 pools, at several cluster counts. Reported per case:
// a cold reconcile (caches cleared: CEL compiled, every request matched); a full reconcile
// from nothing on fresh objects each run, as a long-running operator sees them (compiled CEL
// and matches of requests against device lists stay cached by content); the steady-state
// reconcile that retains what the first one placed; the time per placed replica; one
// deployment's reconcile against the whole fleet; and the growth ratios between cluster
// counts. Absolute times are printed, never asserted (docs/benchmarks.md).
import { performance } from "node:perf_hooks";
import { clearFleetCaches, type FleetInput, type ModelReplica, placeFleet } from "../../src/fleet/index.js";
import { mulberry32 } from "../../src/prng/index.js";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";
import { makeClusters, makeDeployments } from "./synthetic.js";

const CLUSTER_COUNTS = [25, 50, 100, 200];
const DEPLOYMENTS = 1000;
const RUNS = 11;
const DEFAULT_SEED = 20261130;

function parseSeed(args: readonly string[]): number {
  for (const a of args) {
    const m = /^--seed=(\d+)$/.exec(a);
    if (m) return Number(m[1]);
  }
  return DEFAULT_SEED;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * Wall times (ms) of `fn` over RUNS runs, each on inputs `make()` builds outside the timing:
 * the median, and the fastest (the least disturbed by other work on a shared machine).
 */
function timed<T>(make: () => T, fn: (input: T) => unknown): { p50: number; min: number } {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const input = make();
    const t0 = performance.now();
    fn(input);
    times.push(performance.now() - t0);
  }
  return { p50: percentile(times, 50), min: Math.min(...times) };
}

/**
 * An operator reconciling one deployment at a time still sees the whole fleet: all clusters
 * and every replica (the ledger). Median over a sample of deployments, inputs reused as an
 * informer cache would hand them over.
 */
function oneDeployment(input: FleetInput, replicas: readonly ModelReplica[]): number {
  const times: number[] = [];
  const step = Math.max(1, Math.floor(input.deployments.length / 25));
  for (let i = 0; i < input.deployments.length; i += step) {
    const t0 = performance.now();
    placeFleet({ clusters: input.clusters, deployments: [input.deployments[i]!], replicas });
    times.push(performance.now() - t0);
  }
  return percentile(times, 50);
}

export async function run(args: string[]): Promise<void> {
  const seed = parseSeed(args);
  process.stdout.write(`seed ${seed}\n`);
  // Warm the JIT on a small fleet first, so the first case's cold figure measures empty caches,
  // not the process compiling the placer.
  const warm = mulberry32(seed);
  placeFleet({ clusters: makeClusters(warm, 10), deployments: makeDeployments(warm, 200), replicas: [] });
  const rows: Record<string, number>[] = [];
  for (const clusterCount of CLUSTER_COUNTS) {
    const build = (): FleetInput => {
      const rng = mulberry32(seed ^ (clusterCount * 7919));
      return {
        clusters: makeClusters(rng, clusterCount),
        deployments: makeDeployments(rng, DEPLOYMENTS),
        replicas: [],
      };
    };
    const coldInput = build();
    clearFleetCaches();
    const t0 = performance.now();
    const first = placeFleet(coldInput);
    const coldMs = performance.now() - t0;
    const placed: ModelReplica[] = first.deployments.flatMap((d) => d.replicas);
    const full = timed(build, (input) => placeFleet(input));
    const steady = timed(
      () => ({ ...build(), replicas: structuredClone(placed) }),
      (input) => placeFleet(input),
    );
    rows.push({
      clusters: clusterCount,
      pools: clusterCount * 8,
      deployments: DEPLOYMENTS,
      replicas_wanted: build().deployments.reduce((n, d) => n + d.replicas, 0),
      replicas_placed: placed.length,
      cold_ms: round3(coldMs),
      full_p50_ms: round3(full.p50),
      full_min_ms: round3(full.min),
      per_replica_us: round3((full.p50 * 1000) / Math.max(1, placed.length)),
      steady_p50_ms: round3(steady.p50),
      steady_min_ms: round3(steady.min),
      one_deployment_p50_ms: round3(oneDeployment(build(), placed)),
    });
  }
  const at = (c: number) => rows.find((r) => r.clusters === c)!;
  const ratios = CLUSTER_COUNTS.slice(1).map((c, i) => {
    const prev = CLUSTER_COUNTS[i]!;
    const ratio = (k: string) => round3(at(c)[k]! / at(prev)[k]!);
    return {
      clusters: `${prev}→${c}`,
      cluster_ratio: c / prev,
      full_p50_ratio: ratio("full_p50_ms"),
      full_min_ratio: ratio("full_min_ms"),
      steady_p50_ratio: ratio("steady_p50_ms"),
      steady_min_ratio: ratio("steady_min_ms"),
    };
  });
  const target = at(100);
  const result = {
    ...runInfo(seed),
    deployments: DEPLOYMENTS,
    pools_per_cluster: 8,
    runs_per_case: RUNS,
    cases: rows,
    growth: ratios,
    target: {
      full_p50_ms_at_100_clusters: target.full_p50_ms,
      under_1s: target.full_p50_ms! < 1000,
      // growth from the fastest runs, the least disturbed by other work on the machine
      no_worse_than_linear: ratios.every((r) => r.full_min_ratio <= r.cluster_ratio),
    },
  };
  writeResult("fleet", result);
  process.stdout.write(`${markdownTable(rows)}\n\n${markdownTable(ratios)}\n`);
  process.stdout.write(
    `target: a full reconcile of ${DEPLOYMENTS} deployments over 100 clusters × 8 pools under 1 s ` +
      `(p50 ${target.full_p50_ms} ms); growth no worse than linear in clusters ` +
      `(fastest-run time ratios ${ratios.map((r) => `${r.clusters}: ${r.full_min_ratio}`).join(", ")})\n`,
  );
}
