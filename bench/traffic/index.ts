// traffic — placement under real traffic (docs/benchmarks.md `traffic`): sidecar processes on a
// real nats-server, callers looping through their proxies, emulated GPUs over HTTP on the real
// clock. Each scenario runs once per policy in the same run — the default (expected seconds)
// and Kubemoot's weighted cost (KUBEMOOT_POLICY=kubemoot) — so the two are compared on the
// same machine at the same time.
// - thrash: two models that cannot share one 16 GiB card, 3 sidecars × 6 callers, half of them
//   on each model. Reports the share of wall time the card spent loading (target ≤ 30 %),
//   unloads per minute, calls completed and their p95.
// - concurrency: one model, two single-slot GPUs, bursts of four concurrent calls. Reports
//   p95, calls completed, how many calls ever queued at an engine behind a full slot, and how
//   many spread to the second GPU.
// - churn: thrash with the card probed every 300 ms instead of every 2 s, so its residency is
//   republished as fast as it changes while the calls race (docs/rules/state.md §7).
// All: an independent follower of the tickets bucket counts revisions at which a card's live
// tickets needed more than its usable VRAM (target 0).
// Flags: --seconds=N (per scenario and policy; default 30).
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { openStateStore } from "../../src/state/index.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../../test/helpers/sidecar-process.js";
import { round3 } from "../lib/measure.js";
import { markdownTable, runInfo, writeResult } from "../lib/report.js";
import { UsableWatch } from "./usable-watch.js";

type Policy = "time" | "kubemoot";
const POLICIES: Policy[] = ["time", "kubemoot"];

interface Gpu {
  name: string;
  emulator: EmulatorHandle;
}

/** Samples each GPU's runners: time spent with a model loading, loads, unloads, engine queues. */
class GpuWatch {
  private readonly timer: NodeJS.Timeout;
  private last = performance.now();
  readonly loadingMs = new Map<string, number>();
  readonly loads = new Map<string, number>();
  readonly unloads = new Map<string, number>();
  /** Most requests ever waiting behind a copy's busy slots, beyond the one loading. */
  engineQueued = 0;
  private readonly seen = new Map<string, Set<string>>();
  private readonly loadingNow = new Map<string, Set<string>>();

  constructor(
    private readonly gpus: readonly Gpu[],
    private readonly slots: number,
  ) {
    for (const g of gpus) {
      this.loadingMs.set(g.name, 0);
      this.loads.set(g.name, 0);
      this.unloads.set(g.name, 0);
      this.seen.set(g.name, new Set(g.emulator.gpu().runners.map((r) => r.model)));
      this.loadingNow.set(g.name, new Set());
    }
    this.timer = setInterval(() => this.sample(), 5);
  }

  private sample(): void {
    const now = performance.now();
    const dt = now - this.last;
    this.last = now;
    for (const g of this.gpus) {
      const runners = g.emulator.gpu().runners;
      const loading = runners.filter((r) => r.state === "loading").map((r) => r.model);
      if (loading.length > 0) this.loadingMs.set(g.name, this.loadingMs.get(g.name)! + dt);
      const before = this.loadingNow.get(g.name)!;
      for (const m of loading) if (!before.has(m)) this.loads.set(g.name, this.loads.get(g.name)! + 1);
      this.loadingNow.set(g.name, new Set(loading));
      const models = new Set(runners.map((r) => r.model));
      for (const m of this.seen.get(g.name)!) {
        if (!models.has(m)) this.unloads.set(g.name, this.unloads.get(g.name)! + 1);
      }
      this.seen.set(g.name, models);
      for (const r of runners) {
        this.engineQueued = Math.max(this.engineQueued, r.active + r.waiting - this.slots);
      }
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

interface CallResult {
  ok: boolean;
  ms: number;
  provider: string;
}

async function caller(
  proxy: string,
  model: string,
  outputTokens: number,
  until: number,
  results: CallResult[],
): Promise<void> {
  while (performance.now() < until) {
    const started = performance.now();
    try {
      const res = await fetch(`http://${proxy}/api/chat`, {
        method: "POST",
        body: JSON.stringify({
          model,
          stream: false,
          messages: [{ role: "user", content: "Summarise the incident report in three lines." }],
          options: { num_predict: outputTokens },
        }),
        signal: AbortSignal.timeout(120_000),
      });
      await res.arrayBuffer();
      results.push({
        ok: res.status === 200,
        ms: performance.now() - started,
        provider: res.headers.get("x-kubemoot-provider") ?? "",
      });
      if (res.status !== 200) await new Promise((r) => setTimeout(r, 500));
    } catch {
      results.push({ ok: false, ms: performance.now() - started, provider: "" });
    }
  }
}

function p95(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)]!;
}

interface ScenarioSpec {
  name: string;
  gpus: { name: string; vramMiB: number }[];
  models: Record<string, number>;
  numParallel: number;
  sidecars: number;
  /** Callers per sidecar and the model each calls. */
  callers: (sidecar: number, i: number) => string | undefined;
  callersPerSidecar: number;
  outputTokens: number;
  /** How often the publisher probes the engines (ms); default 2000. */
  probeMs?: number;
}

const THRASH: ScenarioSpec = {
  name: "thrash",
  // 16 GiB (usable 14336): each model takes ≈9 GiB with its KV cache, so only one fits.
  gpus: [{ name: "gpu-16g", vramMiB: 16384 }],
  models: { "alpha:7b": 8000, "beta:7b": 8000 },
  numParallel: 2,
  sidecars: 3,
  callersPerSidecar: 6,
  callers: (_s, i) => (i % 2 === 0 ? "alpha:7b" : "beta:7b"),
  outputTokens: 100,
};

const CHURN: ScenarioSpec = { ...THRASH, name: "churn", probeMs: 300 };

const CONCURRENCY: ScenarioSpec = {
  name: "concurrency",
  gpus: [
    { name: "gpu-a", vramMiB: 24563 },
    { name: "gpu-b", vramMiB: 24563 },
  ],
  models: { "qwen3:8b": 4863 },
  numParallel: 1,
  sidecars: 1,
  callersPerSidecar: 4,
  callers: () => "qwen3:8b",
  outputTokens: 100,
};

async function runScenario(spec: ScenarioSpec, policy: Policy, seconds: number) {
  const nats = await NatsServer.start();
  const store = await openStateStore(nats.url);
  const gpus: Gpu[] = [];
  for (const g of spec.gpus) {
    gpus.push({
      name: g.name,
      emulator: await startEmulator({
        listen: "127.0.0.1:0",
        vramMiB: g.vramMiB,
        models: spec.models,
        contextLength: 8192,
        numParallel: spec.numParallel,
        // 100 tokens at 100 tokens/s: 1 s calls; loads at 8 GiB/s: ≈1 s for 8000 MiB.
        tokensPerS: 100,
        outputTokens: spec.outputTokens,
        loadMiBPerS: 8192,
        timeScale: 1,
      }),
    });
  }
  const publisher = new ProviderPublisher({ sink: store.providerWriter, intervalMs: spec.probeMs ?? 2_000 });
  publisher.start();
  await publisher.setProviders(
    gpus.map((g) => ({
      name: g.name,
      endpoint: g.emulator.url,
      totalVramMiB: spec.gpus.find((x) => x.name === g.name)!.vramMiB,
      maxParallel: spec.numParallel,
      contextLength: 8192,
      maxLoadedModels: 3,
    })),
  );
  await publisher.probeNow();
  const sidecars: SidecarProcess[] = [];
  for (let i = 0; i < spec.sidecars; i++) {
    sidecars.push(
      await startSidecarProcess(
        ["--nats", nats.url, "--agent", `bench/agent-${i}`, "--proxy-listen", "127.0.0.1:0"],
        { KUBEMOOT_POLICY: policy },
      ),
    );
  }
  const watch = new GpuWatch(gpus, spec.numParallel);
  const usableWatch = await UsableWatch.start(nats.url, new Map(spec.gpus.map((g) => [g.name, g.vramMiB])));
  const results: CallResult[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  const loops: Promise<void>[] = [];
  sidecars.forEach((s, si) => {
    for (let i = 0; i < spec.callersPerSidecar; i++) {
      const model = spec.callers(si, i);
      if (model !== undefined) loops.push(caller(s.proxyAddress, model, spec.outputTokens, until, results));
    }
  });
  await Promise.all(loops);
  const wallMs = performance.now() - started;
  watch.stop();
  for (const s of sidecars) await s.stop();
  await usableWatch.finish();
  await publisher.stop();
  for (const g of gpus) await g.emulator.close();
  await store.close();
  await nats.dispose();

  const ok = results.filter((r) => r.ok);
  const loading = Math.max(...gpus.map((g) => watch.loadingMs.get(g.name)! / wallMs));
  const unloads = gpus.reduce((n, g) => n + watch.unloads.get(g.name)!, 0);
  return {
    scenario: spec.name,
    policy,
    seconds: round3(wallMs / 1000),
    calls_completed: ok.length,
    calls_failed: results.length - ok.length,
    latency_p95_s: round3(p95(ok.map((r) => r.ms)) / 1000),
    loading_ratio: round3(loading),
    loads: gpus.reduce((n, g) => n + watch.loads.get(g.name)!, 0),
    unloads_per_min: round3((unloads * 60_000) / wallMs),
    engine_queued_max: watch.engineQueued,
    providers_used: new Set(ok.map((r) => r.provider)).size,
    ticket_revisions: usableWatch.revisions,
    revisions_above_usable: usableWatch.aboveUsable,
  };
}

export async function run(args: string[]): Promise<void> {
  const m = args.map((a) => /^--seconds=(\d+)$/.exec(a)).find((x) => x !== null);
  const seconds = m ? Number(m[1]) : 30;
  const rows = [];
  for (const spec of [THRASH, CHURN, CONCURRENCY]) {
    for (const policy of POLICIES) {
      process.stdout.write(`${spec.name} / ${policy}: ${seconds} s\n`);
      rows.push(await runScenario(spec, policy, seconds));
    }
  }
  const thrash = rows.find((r) => r.scenario === "thrash" && r.policy === "time")!;
  const result = {
    ...runInfo(null),
    seconds,
    rows,
    targets: {
      thrash_loading_ratio_max: 0.3,
      thrash_loading_ratio: thrash.loading_ratio,
      revisions_above_usable_max: 0,
      revisions_above_usable: Math.max(...rows.map((r) => r.revisions_above_usable)),
    },
  };
  const file = writeResult("traffic", result);
  process.stdout.write(`${markdownTable(rows)}\n\nwrote ${file}\n`);
}
