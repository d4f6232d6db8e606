// bench place — the cost of asking (docs/benchmarks.md): the sidecar as a process on a real
// nats-server; a grpc-js client calls Place then Release (warm model, free room), sequentially
// and with 64 concurrent callers. Baselines in the same run: a no-op unary grpc-js RPC to a
// trivial server process, and one NATS KV create + delete from this Node client. Beside them,
// the floor: the same two RPCs on the sidecar's own API server (connect-node) doing only the
// NATS work of a warm claim (bench/lib/floor-server.ts), so the report shows how much of the
// cost is the protocol, its server library and the machine, and how much is the sidecar. The
// targets are against the floor (docs/benchmarks.md). The floor and the sidecar are measured in
// alternating rounds, and the ratios are medians over the rounds, so that the load swings of a
// shared machine fall on both alike.
import { spawn } from "node:child_process";
import path from "node:path";
import { startEmulator } from "../../src/emulator/index.js";
import { MAX_CONVERSATIONS } from "../../src/scheduler/index.js";
import { connectNatsKv } from "../../src/state/index.js";
import { schedulerClient } from "../../test/helpers/grpc-client.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import { repoRoot, startSidecarProcess } from "../../test/helpers/sidecar-process.js";
import { childNodeArgs } from "../lib/child-node-args.js";
import { round3, sequential, throughput } from "../lib/measure.js";
import { type OtlpSink, startOtlpSink } from "../lib/otlp-sink.js";
import { processCpuMs } from "../lib/process-cpu.js";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";
import { publishBenchGpu, startVariant, type Variant } from "./variant.js";

const N = Number(process.env.BENCH_PLACE_N ?? 3000);
const CALLERS = 64;
/** Rounds that alternate the floor and the sidecar (N pairs in sequence in all for each). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_PLACE_ROUNDS ?? 21));
/**
 * Pairs per round from the 64 callers. On a shared machine one throughput window can swing by a
 * quarter either way; many short rounds put the floor and the sidecar side by side more often,
 * and give the median more rounds to settle on.
 */
const RPS_PAIRS = Math.max(CALLERS, Number(process.env.BENCH_PLACE_RPS_N ?? 1000));

export async function run(): Promise<void> {
  const nats = await NatsServer.start();
  const emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 81920,
    models: { "qwen3:8b": 4863 },
    numParallel: 64,
    timeScale: 0.01,
    // No call reaches the engine: with Ollama's default of 5 minutes it would unload the model
    // mid-run, which the publisher's next probe would report, turning warm claims into loads.
    keepAlive: "24h",
  });
  // Loaded before it is first probed: every claim of the run is warm.
  await (
    await fetch(`${emulator.url}/api/generate`, {
      method: "POST",
      body: JSON.stringify({ model: "qwen3:8b" }),
    })
  ).text();
  const published = await publishBenchGpu(nats.url, emulator.url);

  const noop = spawn(process.execPath, [path.join(repoRoot, "dist/bench/lib/noop-server.js")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  // The floor writes to a bucket of its own, which the sidecar does not follow: neither process
  // wakes for the other's writes while it is measured.
  const floor = spawn(
    process.execPath,
    [
      ...childNodeArgs(),
      path.join(repoRoot, "dist/bench/lib/floor-server.js"),
      nats.url,
      "bench_floor_tickets",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const [noopPort, floorPort] = await Promise.all([listeningPort(noop), listeningPort(floor)]);
  const noopClient = schedulerClient(`127.0.0.1:${noopPort}`);
  const floorClient = schedulerClient(`127.0.0.1:${floorPort}`);
  const kv = await connectNatsKv({ servers: nats.url });
  const bucket = await kv.bucket("bench_kv", { history: 1, ttlMs: 0, maxValueBytes: 4096, replicas: 1 });

  // Each call is a turn of one of as many conversations as the sidecar remembers
  // (docs/rules/placement.md §5.5): its table is full, every call looks its conversation up and
  // records its turn, and the conversations' records are published as they are for agent loops
  // (from the second turn, then after a minute).
  let turn = 0;
  const req = (conversation = true) => ({
    agent: "bench/agent",
    candidates: [{ model: "qwen3:8b", score: 100 }],
    promptTokens: 500,
    promptChars: 2000,
    ...(conversation ? { conversationId: `conversation-${turn++ % MAX_CONVERSATIONS}` } : {}),
  });
  const pairOn =
    (name: string, c: typeof noopClient, conversation = true) =>
    async () => {
      const r = await c.call("Place", req(conversation));
      if (r.result !== "placement") throw new Error(`bench: ${name}: Place refused: ${JSON.stringify(r)}`);
      await c.call("Release", {
        ticketId: r.placement.ticketId,
        outcome: "CALL_OUTCOME_SUCCEEDED",
        latencyMs: 100,
      });
    };
  const floorPair = pairOn("floor", floorClient);
  const noopCall = () => noopClient.call("Place", req());
  let k = 0;
  const kvCreateDelete = async () => {
    const key = `k${k++}`;
    await bucket.create(key, new TextEncoder().encode('{"x":1}'));
    await bucket.delete(key);
  };

  let sidecar: Awaited<ReturnType<typeof startSidecarProcess>> | undefined;
  let client: typeof noopClient | undefined;
  let sink: OtlpSink | undefined;
  const variants: Variant[] = [];
  try {
    const noopSeq = await sequential(noopCall, N);
    const kvSeq = await sequential(kvCreateDelete, N);
    const noopRps = await throughput(noopCall, CALLERS, N * 2);
    sidecar = await startSidecarProcess(
      ["--nats", nats.url, "--agent", "bench/agent", "--proxy-listen", ""],
      {},
      { nodeArgs: childNodeArgs() },
    );
    client = schedulerClient(sidecar.apiAddress);
    sink = await startOtlpSink();
    if (process.env.BENCH_PLACE_TRACED !== "0") {
      variants.push(
        await startVariant({
          name: "traced",
          emulatorUrl: emulator.url,
          env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: "always_on" },
        }),
      );
    }
    if (process.env.BENCH_PLACE_BASELINE_BIN) {
      variants.push(
        await startVariant({
          name: "baseline",
          emulatorUrl: emulator.url,
          bin: process.env.BENCH_PLACE_BASELINE_BIN,
        }),
      );
    }
    if (process.env.BENCH_PLACE_FAIR_OFF === "1") {
      variants.push(
        await startVariant({
          name: "fair_off",
          emulatorUrl: emulator.url,
          env: { KUBEMOOT_FAIR_SHARE: "false" },
        }),
      );
    }
    if (process.env.BENCH_PLACE_NO_CONVERSATIONS === "1") {
      variants.push(
        await startVariant({ name: "no_conversations", emulatorUrl: emulator.url, noConversation: true }),
      );
    }
    const servers: Server[] = [
      { name: "floor", pair: floorPair, pid: floor.pid, natsPid: nats.pid },
      { name: "sidecar", pair: pairOn("sidecar", client), pid: sidecar.proc.pid, natsPid: nats.pid },
      ...variants.map((v) => ({
        name: v.name,
        pair: pairOn(v.name, v.client, !v.noConversation),
        pid: v.sidecar.proc.pid,
        natsPid: v.natsPid,
      })),
    ];
    const n = Math.ceil(N / ROUNDS);
    // Every server's code compiled for the 64-caller load before anything is measured: the first
    // round would otherwise measure the JIT (twice the CPU per pair of the rounds after it).
    for (const s of servers) await throughput(s.pair, CALLERS, RPS_PAIRS);
    const rounds: Record<string, Round>[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const warmup = r === 0 ? 200 : 20;
      const measure = async (s: Server): Promise<Round> => {
        const seq = await sequential(s.pair, n, warmup);
        const pids = [s.pid, process.pid, s.natsPid];
        const cpu0 = pids.map(processCpuMs);
        const rps = await throughput(s.pair, CALLERS, RPS_PAIRS);
        const [server, client, natsServer] = pids.map((p, i) => {
          const [a, b] = [cpu0[i], processCpuMs(p)];
          return a === undefined || b === undefined ? undefined : (b - a) / RPS_PAIRS;
        });
        return { seq, rps, cpuMsPerPair: server, clientCpuMsPerPair: client, natsCpuMsPerPair: natsServer };
      };
      // Each round starts with the next server in turn.
      const round: Record<string, Round> = {};
      for (let k = 0; k < servers.length; k++) {
        const s = servers[(r + k) % servers.length]!;
        round[s.name] = await measure(s);
      }
      rounds.push(round);
    }
    const median = (xs: number[]) => round3(percentile(xs, 50));
    const of = (name: string) => rounds.map((x) => x[name]!);
    const floorP50 = median(of("floor").map((x) => x.seq.p50_ms));
    const floorRps = Math.round(
      percentile(
        of("floor").map((x) => x.rps),
        50,
      ),
    );
    const prSeq = {
      p50_ms: median(of("sidecar").map((x) => x.seq.p50_ms)),
      p99_ms: median(of("sidecar").map((x) => x.seq.p99_ms)),
    };
    const prRps = Math.round(
      percentile(
        of("sidecar").map((x) => x.rps),
        50,
      ),
    );
    /** Per round: what `f` gives for server `a` over what it gives for `b`. */
    const ratios = (a: string, b: string, f: (x: Round) => number) => rounds.map((x) => f(x[a]!) / f(x[b]!));
    const p50Ratios = ratios("sidecar", "floor", (x) => x.seq.p50_ms);
    const rpsRatios = ratios("sidecar", "floor", (x) => x.rps);
    const base = noopSeq.p50_ms + kvSeq.p50_ms;
    // CPU per pair from the 64 callers, the mean over the rounds (null off Linux).
    const cpuPerPair = (
      side: string,
      field: "cpuMsPerPair" | "clientCpuMsPerPair" | "natsCpuMsPerPair" = "cpuMsPerPair",
    ) => {
      const xs = of(side).map((x) => x[field]);
      return xs.every((x) => x !== undefined) ? round3(xs.reduce((a, b) => a + b, 0) / xs.length) : null;
    };
    // A variant against the plain sidecar, round by round: `<name>_rps_over_sidecar_64` (and its
    // range), `<name>_p50_over_sidecar`, its own CPU per pair.
    const compared = (name: string, what: string) => {
      if (!variants.some((v) => v.name === name)) return {};
      const rps = ratios(name, "sidecar", (x) => x.rps);
      const p50 = ratios(name, "sidecar", (x) => x.seq.p50_ms);
      return {
        [`${name}_is`]: what,
        [`${name}_rps_64`]: Math.round(
          percentile(
            of(name).map((x) => x.rps),
            50,
          ),
        ),
        [`${name}_p50_ms`]: median(of(name).map((x) => x.seq.p50_ms)),
        [`${name}_rps_over_sidecar_64`]: median(rps),
        [`${name}_rps_over_sidecar_64_min`]: round3(Math.min(...rps)),
        [`${name}_rps_over_sidecar_64_max`]: round3(Math.max(...rps)),
        [`${name}_p50_over_sidecar`]: median(p50),
        [`${name}_p50_over_sidecar_min`]: round3(Math.min(...p50)),
        [`${name}_p50_over_sidecar_max`]: round3(Math.max(...p50)),
        [`${name}_cpu_ms_per_pair_64`]: cpuPerPair(name),
      };
    };
    const sidecarCpu = cpuPerPair("sidecar");
    const floorCpu = cpuPerPair("floor");
    const result = {
      place_release_p50_ms: prSeq.p50_ms,
      place_release_p99_ms: prSeq.p99_ms,
      place_release_rps_64: prRps,
      noop_rpc_p50_ms: noopSeq.p50_ms,
      noop_rpc_rps_64: noopRps,
      kv_create_delete_p50_ms: kvSeq.p50_ms,
      ratio_p50: round3(prSeq.p50_ms / base),
      rps_ratio_64: round3(prRps / noopRps),
      floor_p50_ms: floorP50,
      floor_rps_64: floorRps,
      floor_ratio_p50: round3(floorP50 / base),
      floor_rps_ratio_64: round3(floorRps / noopRps),
      p50_over_floor: median(p50Ratios),
      p50_over_floor_min: round3(Math.min(...p50Ratios)),
      p50_over_floor_max: round3(Math.max(...p50Ratios)),
      rps_over_floor_64: median(rpsRatios),
      rps_over_floor_64_min: round3(Math.min(...rpsRatios)),
      rps_over_floor_64_max: round3(Math.max(...rpsRatios)),
      sidecar_cpu_ms_per_pair_64: sidecarCpu,
      floor_cpu_ms_per_pair_64: floorCpu,
      cpu_over_floor_64: sidecarCpu !== null && floorCpu ? round3(sidecarCpu / floorCpu) : null,
      // The rest of the machine's work per pair: the measuring client and nats-server.
      client_cpu_ms_per_pair_64: cpuPerPair("sidecar", "clientCpuMsPerPair"),
      client_cpu_ms_per_pair_64_floor: cpuPerPair("floor", "clientCpuMsPerPair"),
      nats_cpu_ms_per_pair_64: cpuPerPair("sidecar", "natsCpuMsPerPair"),
      nats_cpu_ms_per_pair_64_floor: cpuPerPair("floor", "natsCpuMsPerPair"),
      ...compared("traced", "tracing every call (100 % sampling, exporting)"),
      ...(sink !== undefined && variants.some((v) => v.name === "traced")
        ? { traced_exports: sink.stats().exports, traced_export_bytes: sink.stats().bytes }
        : {}),
      ...compared("baseline", process.env.BENCH_PLACE_BASELINE_LABEL ?? "another build"),
      ...compared("fair_off", "this build with fair share off (KUBEMOOT_FAIR_SHARE=false)"),
      ...compared("no_conversations", "this build, its calls naming no conversation"),
      rounds: ROUNDS,
      samples: n * ROUNDS,
      rps_samples: RPS_PAIRS * ROUNDS,
    };
    if (variants.some((v) => v.name === "traced") && !(sink!.stats().exports > 0)) {
      throw new Error("bench: the traced sidecar exported no spans");
    }
    writeResult("place", { ...runInfo(null), ...result });
    process.stdout.write(`${markdownTable([result])}\n`);
    process.stdout.write(
      `targets: place_release_p50 ≤ 1.25 × floor_p50 (${result.p50_over_floor}); ` +
        `place_release_rps_64 ≥ 0.85 × floor_rps_64 (${result.rps_over_floor_64})\n` +
        `against the no-op RPC + KV, for comparison: ratio_p50 ${result.ratio_p50} (floor ${result.floor_ratio_p50}), ` +
        `rps ratio ${result.rps_ratio_64} (floor ${result.floor_rps_ratio_64}); ` +
        `server CPU per pair from 64 callers: ${result.sidecar_cpu_ms_per_pair_64} ms, floor ${result.floor_cpu_ms_per_pair_64} ms\n`,
    );
    const r = result as Record<string, unknown>;
    for (const v of variants) {
      process.stdout.write(
        `${v.name} (${r[`${v.name}_is`]}): calls/s ${r[`${v.name}_rps_over_sidecar_64`]} × the plain sidecar's ` +
          `(${r[`${v.name}_rps_over_sidecar_64_min`]}–${r[`${v.name}_rps_over_sidecar_64_max`]}), ` +
          `p50 ${r[`${v.name}_p50_over_sidecar`]} ×, CPU per pair ${r[`${v.name}_cpu_ms_per_pair_64`]} ms` +
          `${v.name === "traced" ? ` (target ≥ 0.95 ×; ${r.traced_exports} exports, ${r.traced_export_bytes} bytes)` : ""}\n`,
      );
    }
  } finally {
    for (const v of variants) await v.close();
    await sink?.close();
    client?.close();
    noopClient.close();
    floorClient.close();
    noop.kill("SIGTERM");
    await stop(floor);
    await sidecar?.stop();
    await kv.close();
    await published.stop();
    await emulator.close();
    await nats.dispose();
  }
}

/** A server measured in the rounds: the floor, the sidecar, a variant. */
interface Server {
  name: string;
  pair: () => Promise<void>;
  pid: number | undefined;
  natsPid: number | undefined;
}

interface Round {
  seq: { p50_ms: number; p99_ms: number };
  rps: number;
  /** CPU time per pair while measuring rps (ms) of the server, the client, nats-server; undefined off Linux. */
  cpuMsPerPair: number | undefined;
  clientCpuMsPerPair: number | undefined;
  natsCpuMsPerPair: number | undefined;
}

function listeningPort(child: ReturnType<typeof spawn>): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    child.once("exit", (code) =>
      reject(new Error(`bench: a reference server exited (${code}) before listening`)),
    );
    child.stdout!.on("data", (d: Buffer) => {
      const m = /listening (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    });
  });
}

async function stop(child: ReturnType<typeof spawn>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
