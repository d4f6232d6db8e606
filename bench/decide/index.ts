// decide — the cost of one placement decision (rank + plan) as the fleet grows.
// A seeded synthetic snapshot per (providers × models) case; the snapshot is indexed once
// (as the sidecar does per state revision) and many requests are planned against it.
// Reported per case: µs per decision p50/p99, plus the index build and index + plan
// ("full", a decision right after a state change) for transparency. Absolute times are
// printed, never asserted (docs/benchmarks.md).
import { performance } from "node:perf_hooks";
import { indexSnapshot, plan } from "../../src/core/index.js";
import { mulberry32 } from "../../src/prng/index.js";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";
import { makeModels, makeRequests, makeSnapshot } from "./synthetic.js";

const PROVIDER_COUNTS = [2, 64, 1024];
const MODEL_COUNTS = [3, 40, 400];
const DEFAULT_SEED = 20260611;

function microsSince(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1000;
}

function parseSeed(args: readonly string[]): number {
  for (const a of args) {
    const m = /^--seed=(\d+)$/.exec(a);
    if (m) return Number(m[1]);
  }
  return DEFAULT_SEED;
}

export async function run(args: string[]): Promise<void> {
  const seed = parseSeed(args);
  process.stdout.write(`seed ${seed}\n`);
  const rows: Record<string, number | string>[] = [];
  const started = performance.now();
  for (const providers of PROVIDER_COUNTS) {
    for (const modelCount of MODEL_COUNTS) {
      const rng = mulberry32(seed ^ (providers * 7919) ^ (modelCount * 104729));
      const models = makeModels(rng, modelCount);
      const snap = makeSnapshot(rng, providers, models);
      const requests = makeRequests(rng, models, 512);
      const iterations = providers >= 1024 ? 3000 : 10_000;
      const steps: Record<string, number> = {};

      // Index builds (what a state change costs), then index + plan, then plan alone.
      const indexUs: number[] = [];
      const fullUs: number[] = [];
      const builds = providers >= 1024 ? 60 : 400;
      for (let i = 0; i < builds + 20; i++) {
        const t0 = process.hrtime.bigint();
        const ix = indexSnapshot(snap);
        const t1 = microsSince(t0);
        plan(ix, requests[i % requests.length]!);
        const t2 = microsSince(t0);
        if (i >= 20) {
          indexUs.push(t1);
          fullUs.push(t2);
        }
      }

      const ix = indexSnapshot(snap);
      for (let i = 0; i < 2000; i++) plan(ix, requests[i % requests.length]!); // warm-up
      const planUs: number[] = [];
      // Decisions that went past step 3 scan every provider (step 4 and queue-or-unload).
      const scanUs: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const req = requests[i % requests.length]!;
        const t0 = process.hrtime.bigint();
        const d = plan(ix, req);
        const us = microsSince(t0);
        planUs.push(us);
        if (d.kind !== "claim" || d.step >= 4) scanUs.push(us);
        const key = d.kind === "claim" ? `step${d.step}` : d.kind === "refuse" ? d.reason : d.kind;
        steps[key] = (steps[key] ?? 0) + 1;
      }
      rows.push({
        providers,
        models: modelCount,
        p50_us: round(percentile(planUs, 50)),
        p99_us: round(percentile(planUs, 99)),
        scan_p50_us: scanUs.length > 0 ? round(percentile(scanUs, 50)) : "-",
        full_p50_us: round(percentile(fullUs, 50)),
        index_p50_us: round(percentile(indexUs, 50)),
        tickets: snap.tickets.length,
        outcomes: Object.entries(steps)
          .sort()
          .map(([k, n]) => `${k}:${Math.round((100 * n) / iterations)}%`)
          .join(" "),
      });
    }
  }
  const file = writeResult("decide", { ...runInfo(seed), rows });
  process.stdout.write(`${markdownTable(rows)}\n\n`);
  process.stdout.write(
    "p50_us/p99_us: plan on an indexed snapshot (the decision); scan_p50_us: decisions past step 3, which " +
      "scan every provider; full_p50_us: index + plan (a decision right after a state change); " +
      "index_p50_us: index alone.\n",
  );
  process.stdout.write(`wrote ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
