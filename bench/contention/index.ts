// contention — many sidecars, one budget (docs/benchmarks.md). K sidecar processes (default 8)
// × 64 callers race for three providers whose room fits only some claims, on a nats-server of
// its own. An independent checker follows every revision of the tickets bucket and verifies
// no overcommit after each one. Baseline in the same run: raw KV create / update / delete from
// one Node client, idle and under the race's load.
//
// Options: --processes=N (8), --callers=N (64), --duration=SECONDS (10), --seed=N (1).
import { performance } from "node:perf_hooks";
import { PROVIDER_TICKETS_BUCKET } from "../../src/state/buckets.js";
import type { KvBucket } from "../../src/state/kv.js";
import { connectNatsKv } from "../../src/state/nats-kv.js";
import { openStateStore } from "../../src/state/store.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import {
  OvercommitChecker,
  type RefusalRecord,
  unjustifiedRefusals,
} from "../../test/helpers/overcommit-checker.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { TicketFollower } from "../../test/helpers/ticket-follower.js";
import { startWorker } from "../../test/helpers/workers.js";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";

interface WorkerReport {
  claims: number;
  granted: string[];
  refusals: RefusalRecord[];
  errors: string[];
  contention: number;
  latencies: number[];
  casConflicts: number;
  durationMs: number;
  maxViewAgeMs: number;
}

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
    // The checker must read every revision: the tickets bucket keeps 64 per key (a ticket key
    // gets two), so none is dropped before it is read. The claim code does not depend on it.
    const kv = await connectNatsKv({ servers: server.url });
    const tickets = await kv.bucket(PROVIDER_TICKETS_BUCKET, {
      history: 64,
      ttlMs: 600_000,
      maxValueBytes: 4096,
      replicas: 1,
    });
    const setup = await openStateStore(server.url);
    for (const s of STATES) await setup.providerWriter.publish(s);
    const idle = await kvLatency(tickets, 200, "idle");

    const checker = new OvercommitChecker(new Map(STATES.map((s) => [s.name, s])));
    const deletedAt = new Map<string, number>();
    const follower = await TicketFollower.start(server.url, PROVIDER_TICKETS_BUCKET, (e) => {
      checker.apply(e.key, e.operation, e.value, e.revision);
      if (e.operation !== "PUT") deletedAt.set(e.key.slice(e.key.indexOf("__") + 2), e.revision);
    });

    const startAt = Date.now() + 1500;
    const workers = Array.from({ length: processes }, (_, id) =>
      startWorker<WorkerReport>({
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
      }),
    );
    await Promise.all(workers.map((w) => w.ready));
    // Raw KV latency again, under the race's load.
    await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now()) + 1000));
    const loaded = await kvLatency(tickets, 100, "load");
    const reports = await Promise.all(workers.map((w) => w.done));
    await follower.caughtUp(60_000);
    await follower.stop();

    const claims = reports.reduce((n, r) => n + r.claims, 0);
    const granted = reports.reduce((n, r) => n + r.granted.length, 0);
    const refusals = reports.flatMap((r) => r.refusals);
    const seconds = Math.max(...reports.map((r) => r.durationMs)) / 1000;
    const latencies = reports.flatMap((r) => r.latencies);
    const contention = reports.reduce((n, r) => n + r.contention, 0);
    const unjustified = unjustifiedRefusals(refusals, new Map(STATES.map((s) => [s.name, s])), deletedAt);
    const fields = {
      processes,
      callers_per_process: callers,
      duration_s: Number(seconds.toFixed(2)),
      claims,
      granted,
      refused: refusals.length,
      errors: reports.reduce((n, r) => n + r.errors.length, 0),
      claims_per_s: Number((claims / seconds).toFixed(1)),
      granted_per_s: Number((granted / seconds).toFixed(1)),
      cas_conflicts: reports.reduce((n, r) => n + r.casConflicts, 0),
      overcommit_violations: checker.violations.length,
      starved_claims: contention + unjustified.length,
      revisions_checked: checker.revisionsChecked,
      claim_p50_ms: Number(percentile(latencies, 50).toFixed(2)),
      claim_p99_ms: Number(percentile(latencies, 99).toFixed(2)),
      max_view_age_ms: Number(Math.max(...reports.map((r) => r.maxViewAgeMs)).toFixed(1)),
      kv_create_p50_ms: Number(idle.create.toFixed(3)),
      kv_update_p50_ms: Number(idle.update.toFixed(3)),
      kv_delete_p50_ms: Number(idle.delete.toFixed(3)),
      kv_create_loaded_p50_ms: Number(loaded.create.toFixed(3)),
      kv_update_loaded_p50_ms: Number(loaded.update.toFixed(3)),
      kv_delete_loaded_p50_ms: Number(loaded.delete.toFixed(3)),
    };
    const file = writeResult("contention", { ...runInfo(seed), ...fields });
    process.stdout.write(`${markdownTable([fields])}\n\nwrote ${file}\n`);
    await setup.close();
    await kv.close();
    if (fields.overcommit_violations > 0 || fields.starved_claims > 0) {
      process.exitCode = 1;
      process.stderr.write("contention: invariant violated (overcommit or starvation)\n");
    }
  } finally {
    await server.dispose();
  }
}
