// Child process of the proxy benchmark: an in-process sidecar (memory state, the publisher
// probing the emulator, the Scheduler and the proxy) in front of one emulator.
// argv[2]: {"emulatorUrl", "vramMiB", "maxParallel", "contextLength", "model"}, optionally
// "engineUrl"/"engineModel" and "traceEndpoint" (the traced case: tracing started first, as a
// sidecar started with OTEL_EXPORTER_OTLP_ENDPOINT starts it, every call sampled).
// Prints "READY <proxy url> <API url>" (the API: Connect JSON over HTTP/1.1, as curl uses it).
// On a stdin line "MEASURE <n>" it times n sequential in-process
// Place+Release cycles on the warm model and prints "PLACE <json>" (the TTFB baseline).
import { readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { pino } from "pino";
import { startApiServer } from "../../sidecar/api/server.js";
import { ollamaOps } from "../../sidecar/ollama-ops.js";
import { startProxy } from "../../sidecar/proxy/index.js";
import { schedulerService } from "../../sidecar/scheduler/service.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { repoRoot } from "../../src/repo-root.js";
import { Scheduler, schedulerConfigFromEnv } from "../../src/scheduler/index.js";
import { openStateStore } from "../../src/state/index.js";
import { startTracing } from "../../src/tracing/index.js";
import { percentile } from "../lib/report.js";

interface ChildArgs {
  emulatorUrl: string;
  vramMiB: number;
  maxParallel: number;
  contextLength: number;
  model: string;
  /** An emulator published as an OpenAI-only engine ("vllm") serving `engineModel`. */
  engineUrl?: string;
  engineModel?: string;
  /** An OTLP/HTTP endpoint: trace every call and export there (docs/tracing.md). */
  traceEndpoint?: string;
}

type RunningTracing = NonNullable<Awaited<ReturnType<typeof startTracing>>>;

/**
 * The tracing SDK as `kubemoot-scheduler sidecar` starts it (src/cli/main.ts), with the endpoint
 * and 100 % sampling. The SDK's exporter and sampler read OTEL_* from process.env themselves,
 * so the variables are set there, as a real sidecar's environment has them; a traces-only
 * endpoint would take precedence over the sink, so it is removed.
 */
async function startTraced(endpoint: string): Promise<RunningTracing> {
  delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: "always_on" });
  const { version } = JSON.parse(readFileSync(path.join(repoRoot(), "package.json"), "utf8")) as {
    version: string;
  };
  const logger = pino({ base: { component: "tracing" }, level: "warn" }, pino.destination(2));
  // process.env now holds both: the SDK's exporter and sampler read it, and so does the switch.
  const tracing = await startTracing("sidecar", version, logger, process.env);
  if (!tracing) throw new Error("tracing did not start (OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none?)");
  return tracing;
}

async function main(): Promise<void> {
  const a = JSON.parse(process.argv[2] ?? "{}") as ChildArgs;
  // Before anything else, as a sidecar does: every span of what follows goes to the endpoint.
  const tracing = a.traceEndpoint ? await startTraced(a.traceEndpoint) : undefined;
  const state = await openStateStore("memory");
  const publisher = new ProviderPublisher({ sink: state.providerWriter, intervalMs: 1000 });
  await publisher.setProviders([
    {
      name: "gpu0",
      endpoint: a.emulatorUrl,
      totalVramMiB: a.vramMiB,
      maxParallel: a.maxParallel,
      contextLength: a.contextLength,
    },
  ]);
  publisher.start();
  await publisher.probeNow();
  if (a.engineUrl && a.engineModel) {
    // Written as the operator's engine probe would; probed "in the future" so it never goes
    // stale during the run (the publisher leaves states it does not own alone).
    await state.providerWriter.publish({
      name: "engine0",
      endpoint: a.engineUrl,
      engine: "vllm",
      maxParallel: a.maxParallel,
      activeCount: 0,
      queueDepth: 0,
      loadedModels: [a.engineModel],
      ready: true,
      lastProbedAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
      // Room for its own model only: today's placement (which does not yet know that a
      // fixed-model engine cannot load another model) then never picks it for the other one.
      totalVramMiB: 2700,
      loadedModelFootprintsMiB: { [a.engineModel]: 2600 },
      availableModelFootprintsMiB: {},
      contextLength: a.contextLength,
      loadedModelContextLengths: { [a.engineModel]: a.contextLength },
    });
  }
  const ops = ollamaOps();
  const config = schedulerConfigFromEnv({ KUBEMOOT_NAMESPACE: "bench", KUBEMOOT_AGENT_NAME: "proxy" });
  const scheduler = new Scheduler({ state, config, ops });
  // Place durations as the proxy sees them (reported with MEASURE): the placement share of TTFB.
  const placeMs: number[] = [];
  const place = scheduler.place.bind(scheduler);
  scheduler.place = async (...args: Parameters<Scheduler["place"]>) => {
    const t0 = performance.now();
    try {
      return await place(...args);
    } finally {
      placeMs.push(performance.now() - t0);
    }
  };
  const proxy = await startProxy({
    host: "127.0.0.1",
    port: 0,
    scheduler,
    providers: () => state.providers.peekAll(),
  });
  const api = await startApiServer({ host: "127.0.0.1", port: 0, impl: schedulerService(scheduler) });
  process.stdout.write(`READY http://127.0.0.1:${proxy.port} http://127.0.0.1:${api.port}\n`);

  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    const m = /^MEASURE (\d+)$/.exec(line.trim());
    if (!m) return;
    const during = placeMs.splice(0);
    const proxied = {
      proxied_place_p50_ms: percentile(during, 50),
      proxied_place_p99_ms: percentile(during, 99),
      proxied_place_max_ms: Math.max(0, ...during),
    };
    void measure(scheduler, a.model, Number(m[1])).then((r) =>
      process.stdout.write(`PLACE ${JSON.stringify({ ...r, ...proxied })}\n`),
    );
  });
  const stop = async () => {
    await proxy.close(1000);
    await api.close();
    await scheduler.close();
    await publisher.stop();
    await ops.close();
    await state.close();
    // Last, as the sidecar's command does: exports the spans still queued.
    await tracing?.shutdown();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  lines.on("close", () => void stop());
}

async function measure(
  scheduler: Scheduler,
  model: string,
  n: number,
): Promise<{ p50_ms: number; p99_ms: number }> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const out = await scheduler.place({
      agent: "bench/proxy",
      threadId: "",
      phase: "mulling",
      candidates: [{ model, score: 100 }],
      promptTokens: 20,
      promptChars: 70,
      maxOutputTokens: 0,
      cannotWait: false,
    });
    if (out.kind !== "placed") throw new Error(`place refused: ${out.refusal.reason}`);
    await scheduler.release({
      ticketId: out.placement.ticketId,
      outcome: "succeeded",
      latencyMs: 1,
      promptTokens: 20,
      promptChars: 70,
      outputTokens: 1,
      error: "",
    });
    ms.push(performance.now() - t0);
  }
  const warm = ms.slice(Math.floor(n / 10));
  return { p50_ms: percentile(warm, 50), p99_ms: percentile(warm, 99) };
}

main().catch((err) => {
  process.stderr.write(`proxy-child: ${err?.stack ?? err}\n`);
  process.exit(1);
});
