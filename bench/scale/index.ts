// `bench scale` (docs/benchmarks.md "scale"): what following the shared state costs a sidecar as
// the fleet grows, on a real nats-server with real sidecar processes and the synthetic fleet of
// ./fleet.ts, whose load generator writes the KV traffic of N agent pods. Reported per sidecar:
// CPU as a share of one core, RSS, entries received per second by bucket; the server's egress; a
// new store's replay of 20,000 live keys; 32 sidecars started at once; put-to-copy latency
// (./put-to-copy.ts); calls above a one-slot copy's slots with 8 sidecars racing (./slots.ts).

import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { keyLayout, openStateStore } from "../../src/state/index.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../../test/helpers/sidecar-process.js";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { processCpuMs } from "../lib/process-cpu.js";
import { markdownTable, percentile, runInfo, writeResult } from "../lib/report.js";
import {
  CREW_PODS,
  Load,
  modelOf,
  PER_SIDECAR,
  PROVIDERS,
  providerName,
  round,
  SIDECARS,
  ticketValue,
} from "./fleet.js";
import { putToCopy } from "./put-to-copy.js";
import { slotsRun } from "./slots.js";

const FLEETS = [100, 300, 1000, 0];
const WINDOW_MS = 15_000;
const WARMUP_MS = 60_000;

function rssMiB(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

async function entries(s: SidecarProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${s.apiUrl}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^kubemoot_state_watch_entries_total\{bucket="([^"]+)"\} (\d+)/gm)) {
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

async function varz(server: NatsServer): Promise<{ out_msgs: number; out_bytes: number }> {
  return (await (await fetch(`${server.monitorUrl}/varz`)).json()) as { out_msgs: number; out_bytes: number };
}

export async function run(_args: string[]): Promise<void> {
  const info = runInfo();
  const server = await NatsServer.start();
  const fleet = await openStateStore(server.url, { holderId: "bench/fleet" });
  const kvRaw = fleet.kv;
  const tickets = await kvRaw.bucket("kubemoot_provider_tickets", {
    history: 1,
    ttlMs: 600_000,
    maxValueBytes: 4096,
    replicas: 1,
  });
  const demand = await kvRaw.bucket("kubemoot_model_demand", {
    history: 1,
    ttlMs: 6 * 3_600_000,
    maxValueBytes: 4096,
    replicas: 1,
  });
  for (let i = 0; i < PROVIDERS; i++) {
    await fleet.providerWriter.publish(
      providerState(providerName(i), {
        totalVramMiB: 81920,
        availableModelFootprintsMiB: { [modelOf(i)]: 4000 },
      }),
    );
  }

  // Sidecars, each following its crew's 4 providers (one call with their models brings them in).
  const sidecars = await Promise.all(
    Array.from({ length: SIDECARS }, (_, j) =>
      startSidecarProcess(
        ["--nats", server.url, "--agent", `crew-${j}/agent`, "--proxy-listen", ""],
        {},
        { timeoutMs: 60_000 },
      ),
    ),
  );
  for (const [j, s] of sidecars.entries()) {
    const candidates = Array.from({ length: PER_SIDECAR }, (_, k) => ({
      model: modelOf(j * PER_SIDECAR + k),
      score: 50,
    }));
    const r = await fetch(`${s.apiUrl}/kubemoot.scheduler.v1.SchedulerService/Place`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agent: `crew-${j}/agent`, candidates }),
    });
    const placed = (await r.json()) as { placement?: { ticketId: string } };
    if (placed.placement) {
      await fetch(`${s.apiUrl}/kubemoot.scheduler.v1.SchedulerService/Release`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ticketId: placed.placement.ticketId, outcome: "CALL_OUTCOME_SUCCEEDED" }),
      });
    }
  }

  // A started process's heap settles in its first minute idle (V8 runs a few full collections
  // once the isolate goes quiet: RSS falls by about a sixth); that is start-up, not the cost of
  // following the fleet, so the windows begin after it.
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  const load = new Load(tickets, demand, fleet);
  const phases: Record<string, unknown>[] = [];
  for (const pods of FLEETS) {
    load.start(pods);
    await new Promise((r) => setTimeout(r, 2000)); // settle
    const cpu0 = sidecars.map((s) => processCpuMs(s.proc.pid) ?? 0);
    const e0 = await Promise.all(sidecars.map(entries));
    const v0 = await varz(server);
    const w0 = load.writes;
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const dt = (performance.now() - t0) / 1000;
    const cpu1 = sidecars.map((s) => processCpuMs(s.proc.pid) ?? 0);
    const e1 = await Promise.all(sidecars.map(entries));
    const v1 = await varz(server);
    const per = sidecars.map((s, j) => {
      const byBucket: Record<string, number> = {};
      for (const b of Object.keys(e1[j]!)) byBucket[b] = round(((e1[j]![b] ?? 0) - (e0[j]![b] ?? 0)) / dt, 1);
      return {
        core_share: (cpu1[j]! - cpu0[j]!) / 1000 / dt,
        rss_mib: rssMiB(s.proc.pid),
        msgs_per_s: Object.values(byBucket).reduce((a, b) => a + b, 0),
        by_bucket: byBucket,
      };
    });
    phases.push({
      pods,
      kv_writes_per_s: round((load.writes - w0) / dt, 1),
      sidecar_core_share_max: round(Math.max(...per.map((p) => p.core_share)), 4),
      sidecar_core_share_median: round(
        percentile(
          per.map((p) => p.core_share),
          50,
        ),
        4,
      ),
      sidecar_rss_mib_max: round(Math.max(...per.map((p) => p.rss_mib)), 1),
      sidecar_msgs_per_s_median: round(
        percentile(
          per.map((p) => p.msgs_per_s),
          50,
        ),
        1,
      ),
      sidecar_msgs_by_bucket: per[0]!.by_bucket,
      server_out_msgs_per_s: round((v1.out_msgs - v0.out_msgs) / dt, 1),
      server_out_bytes_per_s: Math.round((v1.out_bytes - v0.out_bytes) / dt),
      per_sidecar: per,
    });
    process.stdout.write(`pods ${pods}: ${JSON.stringify(phases.at(-1)).slice(0, 300)}\n`);
  }
  load.stop();
  for (const s of sidecars) await s.stop();

  // Replay: 20,000 live keys, then a new store follows 4 providers (scoped) or everything.
  const holder = "bench/seed@1";
  const seedKeys = keyLayout("scoped", holder);
  const writes: Promise<number>[] = [];
  for (let i = 0; i < 20_000; i++) {
    const p = providerName(i % PROVIDERS);
    const id = `10000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
    writes.push(
      tickets.put(
        seedKeys.ticket({ provider: p, ticketId: id }),
        ticketValue(p, id, modelOf(i % PROVIDERS), holder),
      ),
    );
    if (writes.length >= 500) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  const replay = async (scope: "candidates" | "all", rounds = 5) => {
    const times: number[] = [];
    const rss: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const rss0 = process.memoryUsage().rss;
      const t0 = performance.now();
      const s = await openStateStore(server.url, {
        ticketsScope: scope,
        holderId: "bench/replay@1",
        firstSnapshotTimeoutMs: 30_000,
      });
      await s.tickets.everything(Array.from({ length: PER_SIDECAR }, (_, k) => modelOf(k)));
      times.push((performance.now() - t0) / 1000);
      rss.push((process.memoryUsage().rss - rss0) / 1048576);
      await s.close();
    }
    return {
      s_median: round(percentile(times, 50)),
      s_min: round(Math.min(...times)),
      s_max: round(Math.max(...times)),
      rss_growth_mib_median: round(percentile(rss, 50), 1),
    };
  };
  const replayScoped = await replay("candidates");
  const replayAll = await replay("all");
  process.stdout.write(
    `replay 20k: scoped ${JSON.stringify(replayScoped)}, whole bucket ${JSON.stringify(replayAll)}\n`,
  );

  // 32 sidecars started at once against the 20,000 live keys.
  const t0 = performance.now();
  const starts = await Promise.allSettled(
    Array.from({ length: 32 }, (_, i) =>
      startSidecarProcess(
        ["--nats", server.url, "--agent", `crew-s/a${i}`, "--proxy-listen", ""],
        {},
        { timeoutMs: 60_000 },
      ),
    ),
  );
  const readyS = (performance.now() - t0) / 1000;
  const ready = starts.filter((s) => s.status === "fulfilled").length;
  await Promise.all(starts.map((s) => (s.status === "fulfilled" ? s.value.stop() : Promise.resolve())));
  process.stdout.write(`32 concurrent starts: ${ready} ready in ${readyS.toFixed(1)} s\n`);

  const lat1 = await putToCopy(server.url, tickets, 1, "in-process");
  const lat16 = await putToCopy(server.url, tickets, 16, "in-process");
  const lat1p = await putToCopy(server.url, tickets, 1, "processes");
  const lat16p = await putToCopy(server.url, tickets, 16, "processes");
  const lat16b = await putToCopy(server.url, tickets, 16, "processes", "bursts");
  process.stdout.write(
    `put-to-copy in-process: 1 watcher ${JSON.stringify(lat1)}, 16 watchers ${JSON.stringify(lat16)}\n` +
      `put-to-copy in processes: 1 watcher ${JSON.stringify(lat1p)}, 16 watchers ${JSON.stringify(lat16p)}, ` +
      `16 in bursts ${JSON.stringify(lat16b)}\n`,
  );

  await fleet.close();
  await server.dispose();

  // Slots across sidecars: 8 sidecar processes racing for one-slot copies (./slots.ts).
  const slots = await slotsRun();
  process.stdout.write(`slots: ${JSON.stringify(slots)}\n`);

  const at = (pods: number) =>
    phases.find((p) => p.pods === pods) as Record<string, number> & { pods: number };
  const num = (pods: number, k: string): number => at(pods)[k] ?? Number.NaN;
  const bucketRate = (pods: number, bucket: string): number =>
    (phases.find((p) => p.pods === pods)?.sidecar_msgs_by_bucket as Record<string, number> | undefined)?.[
      bucket
    ] ?? Number.NaN;
  const share1000 = num(1000, "sidecar_core_share_max");
  const msgsRatio = num(1000, "sidecar_msgs_per_s_median") / num(100, "sidecar_msgs_per_s_median");
  const targets = {
    sidecar_core_share_1000_pods: { value: share1000, goal: 0.01, met: share1000 <= 0.01 },
    watch_msgs_per_sidecar_bounded: { value: round(msgsRatio, 2), goal: 1.5, met: msgsRatio <= 1.5 },
    // Not a target of its own: the tickets bucket alone, which the sidecar follows per provider.
    tickets_msgs_per_sidecar_ratio: {
      value: round(
        bucketRate(1000, "kubemoot_provider_tickets") / bucketRate(100, "kubemoot_provider_tickets"),
        2,
      ),
      goal: 1.5,
      met:
        bucketRate(1000, "kubemoot_provider_tickets") / bucketRate(100, "kubemoot_provider_tickets") <= 1.5,
    },
    engine_oversubscribed_max: {
      value: slots.oversubscribed_max,
      goal: 0,
      met: slots.oversubscribed_max === 0 && slots.failed_calls === 0,
    },
    replay_20k_keys_s: { value: replayScoped.s_median, goal: 1, met: replayScoped.s_median <= 1 },
    concurrent_start_ready_share: { value: ready / 32, goal: 1, met: ready === 32 },
    // Watchers in processes of their own, as sidecars are.
    put_to_copy_p99_ms_16_watchers: { value: lat16p.p99_ms, goal: 5, met: lat16p.p99_ms <= 5 },
  };
  const result = {
    ...info,
    providers: PROVIDERS,
    sidecars: SIDECARS,
    providers_per_sidecar: PER_SIDECAR,
    crew_pods_per_sidecar: CREW_PODS,
    window_s: WINDOW_MS / 1000,
    warmup_s: WARMUP_MS / 1000,
    phases,
    replay_20k: { scoped: replayScoped, whole_bucket: replayAll },
    concurrent_starts: { sidecars: 32, ready, seconds: round(readyS, 1) },
    put_to_copy: { watchers_1: lat1, watchers_16: lat16 },
    put_to_copy_processes: { watchers_1: lat1p, watchers_16: lat16p, watchers_16_bursts: lat16b },
    slots,
    extrapolation_1000_sidecars: {
      server_out_msgs_per_s: Math.round(num(1000, "sidecar_msgs_per_s_median") * 1000),
      note: "each sidecar's ticket and provider-state entries grow with its providers' churn and its demand entries with its models' (candidates and residents); of the rest of the fleet it receives only offer keys, which change with a provider's models",
    },
    targets,
  };
  process.stdout.write(
    `${markdownTable(phases.map(({ per_sidecar, sidecar_msgs_by_bucket, ...p }) => p))}\n`,
  );
  process.stdout.write(`targets: ${JSON.stringify(targets)}\n`);
  process.stdout.write(`wrote ${writeResult("scale", result)}\n`);
}
