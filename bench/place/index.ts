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
import { ProviderPublisher } from "../../src/publisher/index.js";
import { MAX_CONVERSATIONS } from "../../src/scheduler/index.js";
import { bucketSettings, connectNatsKv, PROVIDER_STATE_BUCKET } from "../../src/state/index.js";
import { ProviderStateWriter } from "../../src/state/provider-state.js";
import { schedulerClient } from "../../test/helpers/grpc-client.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import { repoRoot, startSidecarProcess } from "../../test/helpers/sidecar-process.js";
import { round3, sequential, throughput } from "../lib/measure.js";
import { processCpuMs } from "../lib/process-cpu.js";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";

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
  });
  // The provider state is published through a bare bucket: a whole state store here would
  // follow every bucket, and so process each of the sidecar's writes in the measuring client.
  const stateKv = await connectNatsKv({ servers: nats.url });
  const stateBucket = await stateKv.bucket(PROVIDER_STATE_BUCKET, bucketSettings(1)[PROVIDER_STATE_BUCKET]!);
  const publisher = new ProviderPublisher({ sink: new ProviderStateWriter(stateBucket), intervalMs: 60_000 });
  await publisher.setProviders([
    { name: "bench-gpu", endpoint: emulator.url, totalVramMiB: 81920, maxParallel: 64 },
  ]);
  await (
    await fetch(`${emulator.url}/api/generate`, {
      method: "POST",
      body: JSON.stringify({ model: "qwen3:8b" }),
    })
  ).text();
  await publisher.probeNow();

  const noop = spawn(process.execPath, [path.join(repoRoot, "dist/bench/lib/noop-server.js")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  // The floor writes to a bucket of its own, which the sidecar does not follow: neither process
  // wakes for the other's writes while it is measured.
  const floor = spawn(
    process.execPath,
    [path.join(repoRoot, "dist/bench/lib/floor-server.js"), nats.url, "bench_floor_tickets"],
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
  const req = () => ({
    agent: "bench/agent",
    candidates: [{ model: "qwen3:8b", score: 100 }],
    promptTokens: 500,
    promptChars: 2000,
    conversationId: `conversation-${turn++ % MAX_CONVERSATIONS}`,
  });
  const pairOn = (c: typeof noopClient) => async () => {
    const r = await c.call("Place", req());
    if (r.result !== "placement") throw new Error(`bench: Place refused: ${JSON.stringify(r)}`);
    await c.call("Release", {
      ticketId: r.placement.ticketId,
      outcome: "CALL_OUTCOME_SUCCEEDED",
      latencyMs: 100,
    });
  };
  const floorPair = pairOn(floorClient);
  const noopCall = () => noopClient.call("Place", req());
  let k = 0;
  const kvCreateDelete = async () => {
    const key = `k${k++}`;
    await bucket.create(key, new TextEncoder().encode('{"x":1}'));
    await bucket.delete(key);
  };

  let sidecar: Awaited<ReturnType<typeof startSidecarProcess>> | undefined;
  let client: typeof noopClient | undefined;
  try {
    const noopSeq = await sequential(noopCall, N);
    const kvSeq = await sequential(kvCreateDelete, N);
    const noopRps = await throughput(noopCall, CALLERS, N * 2);
    sidecar = await startSidecarProcess(["--nats", nats.url, "--agent", "bench/agent", "--proxy-listen", ""]);
    client = schedulerClient(sidecar.apiAddress);
    const placeRelease = pairOn(client);
    const n = Math.ceil(N / ROUNDS);
    // Both servers' code compiled for the 64-caller load before anything is measured: the first
    // round would otherwise measure the JIT (twice the CPU per pair of the rounds after it).
    await throughput(floorPair, CALLERS, RPS_PAIRS);
    await throughput(placeRelease, CALLERS, RPS_PAIRS);
    const rounds: { floor: Round; sidecar: Round }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const warmup = r === 0 ? 200 : 20;
      const measure = async (fn: () => Promise<void>, pid: number | undefined): Promise<Round> => {
        const seq = await sequential(fn, n, warmup);
        const pids = [pid, process.pid, nats.pid];
        const cpu0 = pids.map(processCpuMs);
        const rps = await throughput(fn, CALLERS, RPS_PAIRS);
        const [server, client, natsServer] = pids.map((p, i) => {
          const [a, b] = [cpu0[i], processCpuMs(p)];
          return a === undefined || b === undefined ? undefined : (b - a) / RPS_PAIRS;
        });
        return { seq, rps, cpuMsPerPair: server, clientCpuMsPerPair: client, natsCpuMsPerPair: natsServer };
      };
      // Alternate which goes first.
      if (r % 2 === 0) {
        const floorRound = await measure(floorPair, floor.pid);
        rounds.push({ floor: floorRound, sidecar: await measure(placeRelease, sidecar.proc.pid) });
      } else {
        const side = await measure(placeRelease, sidecar.proc.pid);
        rounds.push({ floor: await measure(floorPair, floor.pid), sidecar: side });
      }
    }
    const median = (xs: number[]) => round3(percentile(xs, 50));
    const floorP50 = median(rounds.map((x) => x.floor.seq.p50_ms));
    const floorRps = Math.round(
      percentile(
        rounds.map((x) => x.floor.rps),
        50,
      ),
    );
    const prSeq = {
      p50_ms: median(rounds.map((x) => x.sidecar.seq.p50_ms)),
      p99_ms: median(rounds.map((x) => x.sidecar.seq.p99_ms)),
    };
    const prRps = Math.round(
      percentile(
        rounds.map((x) => x.sidecar.rps),
        50,
      ),
    );
    const p50Ratios = rounds.map((x) => x.sidecar.seq.p50_ms / x.floor.seq.p50_ms);
    const rpsRatios = rounds.map((x) => x.sidecar.rps / x.floor.rps);
    const base = noopSeq.p50_ms + kvSeq.p50_ms;
    // CPU per pair from the 64 callers, the mean over the rounds (null off Linux).
    const cpuPerPair = (
      side: "floor" | "sidecar",
      of: "cpuMsPerPair" | "clientCpuMsPerPair" | "natsCpuMsPerPair" = "cpuMsPerPair",
    ) => {
      const xs = rounds.map((x) => x[side][of]);
      return xs.every((x) => x !== undefined) ? round3(xs.reduce((a, b) => a + b, 0) / xs.length) : null;
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
      rounds: ROUNDS,
      samples: n * ROUNDS,
      rps_samples: RPS_PAIRS * ROUNDS,
    };
    writeResult("place", { ...runInfo(null), ...result });
    process.stdout.write(`${markdownTable([result])}\n`);
    process.stdout.write(
      `targets: place_release_p50 ≤ 1.25 × floor_p50 (${result.p50_over_floor}); ` +
        `place_release_rps_64 ≥ 0.85 × floor_rps_64 (${result.rps_over_floor_64})\n` +
        `against the no-op RPC + KV, for comparison: ratio_p50 ${result.ratio_p50} (floor ${result.floor_ratio_p50}), ` +
        `rps ratio ${result.rps_ratio_64} (floor ${result.floor_rps_ratio_64}); ` +
        `server CPU per pair from 64 callers: ${result.sidecar_cpu_ms_per_pair_64} ms, floor ${result.floor_cpu_ms_per_pair_64} ms\n`,
    );
  } finally {
    client?.close();
    noopClient.close();
    floorClient.close();
    noop.kill("SIGTERM");
    await stop(floor);
    await sidecar?.stop();
    await kv.close();
    await publisher.stop();
    await stateKv.close();
    await emulator.close();
    await nats.dispose();
  }
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
