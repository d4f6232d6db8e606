// bench bindings — rebinding latency of per-discussion bindings (issue 35; docs/benchmarks.md
// "bindings", docs/rules/binding.md §9): a real nats-server, BENCH_BINDINGS_PROVIDERS (50)
// emulated GPUs in this process, the operator as a child process reading a generated manifests
// directory and probing every BENCH_BINDINGS_PROBE_MS (250), and BENCH_BINDINGS_THREADS (200)
// live threads opened as a runtime opens them (`kubemoot.discussion.<ns>.<thread>.open`) for the four
// agents of the example crew. A plain @nats-io/kv watch stands in for a sidecar. Each of
// BENCH_BINDINGS_ROUNDS (10) rounds kills the provider holding the most bindings and measures,
// per (thread, phase) key it held, the time from the kill until the watch delivers the key's new
// value (rounds.ts), then revives the provider. Writes bench/results/bindings.json with
// `targets.rebind_p99_s_200_threads` (p99 over every key of every round, goal ≤ 1 s).
//
// Options (`--key=value` or the environment variable): --providers / BENCH_BINDINGS_PROVIDERS,
// --threads / BENCH_BINDINGS_THREADS, --rounds / BENCH_BINDINGS_ROUNDS,
// --probe-ms / BENCH_BINDINGS_PROBE_MS, --idle-s / BENCH_BINDINGS_IDLE_S (the window the
// operator's idle CPU is measured over, 60: one heartbeat period of the provider states).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { EmulatorHandle } from "../../src/emulator/index.js";
import { encodeDiscussionEvent } from "../../src/state/index.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import { type StandaloneProcess, startManifestsOperator } from "../../test/helpers/standalone-process.js";
import { processCpuMs } from "../lib/process-cpu.js";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";
import { CREW_AGENTS, MAX_PARALLEL, providerSpecs, startCard, writeManifests } from "./fleet.js";
import { timeInProcessBind } from "./in-process.js";
import { BucketObserver, until } from "./observer.js";
import { busiestProvider, quiet, type RoundResult, runRound } from "./rounds.js";

const GOAL_S = 1;
/** Fewer rounds than this measure too few kills for the target to count. */
const MIN_ROUNDS = 5;
const STEP_TIMEOUT_MS = 30_000;

function option(args: readonly string[], name: string, env: string, fallback: number): number {
  const flag = args.find((a) => a.startsWith(`--${name}=`));
  const raw = flag?.slice(name.length + 3) ?? process.env[env];
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`bench bindings: --${name} (${env}) must be a number ≥ 0`);
  return n;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export async function run(args: string[]): Promise<void> {
  const providers = Math.max(2, Math.round(option(args, "providers", "BENCH_BINDINGS_PROVIDERS", 50)));
  const threads = Math.max(1, Math.round(option(args, "threads", "BENCH_BINDINGS_THREADS", 200)));
  const rounds = Math.max(1, Math.round(option(args, "rounds", "BENCH_BINDINGS_ROUNDS", 10)));
  const probeMs = Math.max(100, Math.round(option(args, "probe-ms", "BENCH_BINDINGS_PROBE_MS", 250)));
  const idleS = option(args, "idle-s", "BENCH_BINDINGS_IDLE_S", 60);
  const quietMs = Math.max(2000, 4 * probeMs);
  const info = runInfo(null);
  const started = performance.now();
  const specs = providerSpecs(providers);
  const threadList = Array.from({ length: threads }, (_, i) => ({
    threadId: `bench-${String(i).padStart(4, "0")}`,
    agent: CREW_AGENTS[i % CREW_AGENTS.length]!,
  }));

  const cards: EmulatorHandle[] = [];
  let dir: string | undefined;
  let nats: NatsServer | undefined;
  let operator: StandaloneProcess | undefined;
  let observer: BucketObserver | undefined;
  let events: NatsConnection | undefined;
  try {
    for (const spec of specs) cards.push(await startCard(spec));
    dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-bench-bindings-"));
    const manifests = path.join(dir, "manifests");
    mkdirSync(manifests);
    writeManifests(
      manifests,
      specs,
      cards.map((c) => c.url),
    );
    // The pure binder's time on the same input, before the operator runs beside it.
    const inProcess = await timeInProcessBind(manifests, threadList);
    process.stdout.write(`in-process bindDiscussions: ${JSON.stringify(inProcess)}\n`);

    nats = await NatsServer.start();
    // Info: the discussion binder logs each changed key as it decides (operator-log.ts).
    operator = await startManifestsOperator(
      { manifests, outDir: path.join(dir, "out"), natsUrl: nats.url, probeMs },
      { KUBEMOOT_LOG_LEVEL: "info" },
    );
    const op = operator;
    const operatorCpuMs = () => processCpuMs(op.proc.pid);
    observer = await BucketObserver.start(nats.url);
    const o = observer;
    await until(
      () => specs.every((s) => o.providers.get(s.name)?.ready === true),
      STEP_TIMEOUT_MS,
      "every provider's state published ready",
    );

    // Threads opened as a runtime opens them; bound once both phases of every one are in.
    events = await connect({ servers: nats.url, name: "bench-bindings-runtime" });
    const openedAt = performance.now();
    for (const t of threadList) {
      const e = encodeDiscussionEvent({ kind: "open", threadId: t.threadId, agent: t.agent });
      if (!e) throw new Error(`bad thread id ${t.threadId}`);
      events.publish(e.subject, e.data);
    }
    await events.flush();
    const wanted = threadList.flatMap((t) => [`${t.threadId}.mulling`, `${t.threadId}.triage`]);
    await until(
      () => wanted.every((k) => o.bindings.has(k)),
      STEP_TIMEOUT_MS * 2,
      `both phases of ${threads} threads published`,
    );
    const allBoundS = r3((performance.now() - openedAt) / 1000);
    await quiet(o, quietMs, STEP_TIMEOUT_MS);
    const unschedulable = wanted.filter((k) => o.bindings.get(k)?.kind !== "binding").length;
    const spread = new Set(wanted.map((k) => o.bindings.get(k)?.provider)).size;
    const busiest = busiestProvider(o);
    process.stdout.write(
      `${threads} threads bound in ${allBoundS} s over ${spread} providers (busiest ${busiest?.provider} with ${busiest?.keys.length} keys)\n`,
    );

    // The operator's CPU with every thread live and nothing failing: probes, and the heartbeat
    // writes of the provider states (each provider's every 60 s) with the binds they start.
    const idleCpu0 = operatorCpuMs();
    const idleFrom = performance.now();
    await new Promise((r) => setTimeout(r, idleS * 1000));
    const idleCpu1 = operatorCpuMs();
    const idleWallMs = performance.now() - idleFrom;

    const results: RoundResult[] = [];
    const all: number[] = [];
    const deliveries: number[] = [];
    const ctx = {
      observer: o,
      specs,
      cards,
      quietMs,
      timeoutMs: STEP_TIMEOUT_MS,
      operatorCpuMs,
      operatorOutput: () => op.output(),
    };
    for (let r = 1; r <= rounds; r++) {
      const { result, latenciesS, deliveriesS } = await runRound(ctx, r);
      results.push(result);
      all.push(...latenciesS);
      deliveries.push(...deliveriesS);
      process.stdout.write(
        `  round ${r}: ${result.provider} ${result.keys} keys, p50 ${result.p50_s} s, p99 ${result.p99_s} s, max ${result.max_s} s${result.missing > 0 ? `, ${result.missing} MISSING` : ""}\n`,
      );
    }
    if (operator.proc.exitCode !== null) throw new Error(`the operator exited:\n${operator.output()}`);

    const missing = results.reduce((a, r) => a + r.missing, 0);
    const p99 = percentile(all, 99);
    const roundCpu = results.reduce((a, r) => a + (r.operator_cpu_ms ?? 0), 0);
    const roundWall = results.reduce((a, r) => a + r.wall_s, 0);
    const targets = {
      rebind_p99_s_200_threads: {
        value: r3(p99),
        goal: GOAL_S,
        met: p99 <= GOAL_S && missing === 0 && rounds >= MIN_ROUNDS && threads >= 200 && providers >= 50,
      },
    };
    const result = {
      ...info,
      providers,
      threads,
      agents: CREW_AGENTS,
      max_parallel: MAX_PARALLEL,
      probe_interval_ms: probeMs,
      quiet_ms: quietMs,
      initial_bind_s: allBoundS,
      providers_bound_initially: spread,
      unschedulable_initially: unschedulable,
      affected_keys: all.length + missing,
      missing_keys: missing,
      rebind_p50_s: r3(percentile(all, 50)),
      rebind_p99_s: r3(p99),
      rebind_max_s: r3(Math.max(...all)),
      delivery_p50_s: r3(percentile(deliveries, 50)),
      delivery_p99_s: r3(percentile(deliveries, 99)),
      round_p99_range_s: [
        r3(Math.min(...results.map((r) => r.p99_s ?? Number.NaN))),
        r3(Math.max(...results.map((r) => r.p99_s ?? Number.NaN))),
      ],
      in_process_bind: inProcess,
      operator_cpu: {
        idle_share:
          idleCpu0 !== undefined && idleCpu1 !== undefined ? r3((idleCpu1 - idleCpu0) / idleWallMs) : null,
        idle_window_s: r3(idleWallMs / 1000),
        rounds_share: roundWall > 0 ? r3(roundCpu / 1000 / roundWall) : null,
      },
      targets,
      rounds: results,
    };
    const file = writeResult("bindings", result);
    process.stdout.write(
      `${markdownTable(
        results.map((r) => ({ ...r })),
        [
          "round",
          "provider",
          "keys",
          "p50_s",
          "p99_s",
          "max_s",
          "decided_max_s",
          "delivery_max_s",
          "missing",
          "moved_back",
          "operator_cpu_ms",
        ],
      )}\n\n`,
    );
    process.stdout.write(
      `all rounds: ${all.length} keys, p50 ${result.rebind_p50_s} s, p99 ${result.rebind_p99_s} s, max ${result.rebind_max_s} s (probe interval ${probeMs} ms)\n`,
    );
    process.stdout.write(`targets: ${JSON.stringify(targets)}\n`);
    process.stdout.write(`wrote ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    await events?.close().catch(() => undefined);
    await observer?.stop().catch(() => undefined);
    await operator?.stop().catch(() => undefined);
    await Promise.allSettled(cards.map((c) => c.close()));
    await nats?.dispose().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
