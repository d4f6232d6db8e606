// contention — many sidecars, one budget (docs/benchmarks.md). K sidecar processes (default 8)
// × 64 callers race for three providers whose room fits only some claims, on a nats-server of
// its own. An independent checker follows every revision of the tickets bucket and verifies
// no overcommit after each one. Baseline in the same run: raw KV create / update / delete from
// one Node client, idle and under the race's load.
//
// Options: --processes=N (8), --callers=N (64), --duration=SECONDS (10), --seed=N (1).
import { performance } from "node:perf_hooks";
import type { KvBucket } from "../../src/state/kv.js";
import { prepareBuckets, Referee, startRacers, totals } from "../../test/helpers/contention/index.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";

const STATES = [
  providerState("bench-a", {
    totalVramMiB: 24563,
    loadedModelFootprintsMiB: { warm: 5000 },
    lastProbedAt: "",
  }),
  providerState("bench-b", { totalVramMiB: 16384, lastProbedAt: "" }),
  providerState("bench-c", {
    totalVramMiB: 32768,
    loadedModelFootprintsMiB: { big: 20000 },
    lastProbedAt: "",
  }),
];
const PROVIDERS = [
  {
    name: "bench-a",
    models: [
      { model: "warm", footprint: 5000 },
      { model: "c1", footprint: 9000 },
      { model: "c2", footprint: 7000 },
      { model: "c3", footprint: 5000 },
    ],
  },
  {
    name: "bench-b",
    models: [
      { model: "c1", footprint: 9000 },
      { model: "c2", footprint: 7000 },
      { model: "c4", footprint: 4000 },
    ],
  },
  {
    name: "bench-c",
    models: [
      { model: "big", footprint: 20000 },
      { model: "c2", footprint: 7000 },
      { model: "c4", footprint: 4000 },
    ],
  },
];

function option(args: string[], name: string, fallback: number): number {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  const v = a === undefined ? fallback : Number(a.slice(name.length + 3));
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name}: expected a positive number`);
  return v;
}

/** p50 of sequential create, update and delete round trips on one key per iteration (ms). */
async function kvLatency(bucket: KvBucket, n: number, tag: string) {
  const create: number[] = [];
  const update: number[] = [];
  const del: number[] = [];
  const bytes = new TextEncoder().encode('{"probe":true}');
  for (let i = 0; i < n; i++) {
    const key = `_bench__${tag}${i}`;
    let t = performance.now();
    const r = await bucket.create(key, bytes);
    create.push(performance.now() - t);
    t = performance.now();
    const r2 = await bucket.update(key, bytes, r);
    update.push(performance.now() - t);
    t = performance.now();
    await bucket.delete(key, { revision: r2 });
    del.push(performance.now() - t);
  }
  return { create: percentile(create, 50), update: percentile(update, 50), delete: percentile(del, 50) };
}

export async function run(args: string[]): Promise<void> {
  const processes = option(args, "processes", 8);
  const callers = option(args, "callers", 64);
  const durationS = option(args, "duration", 10);
  const seed = option(args, "seed", 1);

  const server = await NatsServer.start();
  try {
    const buckets = await prepareBuckets(server.url, STATES);
    const idle = await kvLatency(buckets.tickets, 200, "idle");
    const referee = await Referee.start(server.url, STATES);

    const startAt = Date.now() + 1500;
    const racers = startRacers(processes, (id) => ({
      id,
      servers: server.url,
      seed: seed * 1000 + id,
      claimers: callers,
      durationMs: durationS * 1000,
      startAt,
      holdMs: [0, 10],
      refusedPauseMs: 5,
      recordRefusals: true,
      recordLatency: true,
      providers: PROVIDERS,
    }));
    await racers.ready;
    // Raw KV latency again, under the race's load.
    await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now()) + 1000));
    const loaded = await kvLatency(buckets.tickets, 100, "load");
    const t = totals(await racers.done);
    await referee.finish(60_000);

    const seconds = t.durationMs / 1000;
    const fields = {
      processes,
      callers_per_process: callers,
      duration_s: Number(seconds.toFixed(2)),
      claims: t.claims,
      granted: t.granted.length,
      refused: t.refusals.length,
      errors: t.errors.length,
      claims_per_s: Number((t.claims / seconds).toFixed(1)),
      granted_per_s: Number((t.granted.length / seconds).toFixed(1)),
      cas_conflicts: t.casConflicts,
      overcommit_violations: referee.checker.violations.length,
      starved_claims: t.contention + referee.unjustified(t.refusals).length,
      revisions_checked: referee.checker.revisionsChecked,
      claim_p50_ms: Number(percentile(t.latencies, 50).toFixed(2)),
      claim_p99_ms: Number(percentile(t.latencies, 99).toFixed(2)),
      max_view_age_ms: Number(t.maxViewAgeMs.toFixed(1)),
      kv_create_p50_ms: Number(idle.create.toFixed(3)),
      kv_update_p50_ms: Number(idle.update.toFixed(3)),
      kv_delete_p50_ms: Number(idle.delete.toFixed(3)),
      kv_create_loaded_p50_ms: Number(loaded.create.toFixed(3)),
      kv_update_loaded_p50_ms: Number(loaded.update.toFixed(3)),
      kv_delete_loaded_p50_ms: Number(loaded.delete.toFixed(3)),
    };
    const file = writeResult("contention", { ...runInfo(seed), ...fields });
    process.stdout.write(`${markdownTable([fields])}\n\nwrote ${file}\n`);
    await buckets.close();
    if (fields.overcommit_violations > 0 || fields.starved_claims > 0) {
      process.exitCode = 1;
      process.stderr.write("contention: invariant violated (overcommit or starvation)\n");
    }
  } finally {
    await server.dispose();
  }
}
