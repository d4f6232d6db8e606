// bench memory — sidecar RSS idle, after 10k and after 20k Place/Release cycles and proxied
// calls, its conversation table full (docs/benchmarks.md). The sidecar is a real process as deployed: shared state on a real
// nats-server (not the embedded store, which would hold the whole bucket — every release's
// tombstone for the bucket TTL — in the sidecar's own memory), the runtime env the webhook
// injects, and an emulated GPU it probes itself; RSS is read from /proc/<pid>/status 2 s after
// each phase and again once it has idled SETTLE_MS more.
// Target: ≤ 100 MB (the 2 s readings), and 20k within 10 % of 10k.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { startEmulator } from "../../src/emulator/index.js";
import { readPromSamples, sumFirst } from "../../src/engines/index.js";
import { MAX_CONVERSATIONS } from "../../src/scheduler/index.js";
import { schedulerClient } from "../../test/helpers/grpc-client.js";
import { NatsServer } from "../../test/helpers/nats-server.js";
import { injectedRuntimeEnv, startSidecarProcess } from "../../test/helpers/sidecar-process.js";
import { markdownTable, runInfo, writeResult } from "../lib/report.js";

const CYCLES = Number(process.env.BENCH_MEMORY_CYCLES ?? 10_000);
/**
 * Proxied chats per phase: each a conversation of its own with MESSAGES messages, more than the
 * sidecar remembers, so that its conversation table (docs/rules/placement.md §5.5) ends each
 * phase full of conversations with all their marks.
 */
const PROXIED_PER_PHASE = Math.max(Math.round(CYCLES / 20), MAX_CONVERSATIONS + 100);
const MESSAGES = 40;
const CONCURRENCY = 16;
/**
 * How long after each phase's reading the sidecar idles before it is read again (ms): V8's
 * memory reducer returns the heap it reserved during the burst only once allocation has slowed
 * for some seconds, so the first reading holds that reserve and the second what the sidecar
 * keeps between bursts (docs/benchmarks.md).
 */
const SETTLE_MS = Number(process.env.BENCH_MEMORY_SETTLE_MS ?? 20_000);
/**
 * The sidecar runs as the webhook injects it (chart values sidecar.nodeOptions and
 * sidecar.mallocArenaMax): V8 grows its heap lazily when nothing bounds it, far beyond the
 * live heap with Node's defaults (the README's Benchmarks section has the figures). Override
 * the options with BENCH_SIDECAR_NODE_OPTIONS ("" for Node's defaults).
 */
const RUNTIME_ENV = injectedRuntimeEnv(
  process.env.BENCH_SIDECAR_NODE_OPTIONS !== undefined
    ? { nodeOptions: process.env.BENCH_SIDECAR_NODE_OPTIONS }
    : {},
);

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? Number.NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

/**
 * The sidecar's V8 heap (used, total) and external memory in MB, and the conversations it
 * remembers, from its own /metrics.
 */
async function heapMb(
  apiAddress: string,
): Promise<{ used: number; total: number; external: number; conversations: number }> {
  const samples = readPromSamples(await (await fetch(`http://${apiAddress}/metrics`)).text());
  const read = (name: string) => {
    const bytes = sumFirst(samples, [`kubemoot_${name}`]);
    return bytes !== undefined ? Math.round((bytes / 1024 / 1024) * 10) / 10 : Number.NaN;
  };
  return {
    used: read("nodejs_heap_size_used_bytes"),
    total: read("nodejs_heap_size_total_bytes"),
    external: read("nodejs_external_memory_bytes"),
    conversations: sumFirst(samples, ["kubemoot_conversations"]) ?? Number.NaN,
  };
}

async function pool(n: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

export async function run(): Promise<void> {
  const emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 81920,
    models: { "qwen3:8b": 4863 },
    numParallel: 16,
    contextLength: 8192,
    timeScale: 0.001,
    tokensPerS: 100_000,
  });
  const nats = await NatsServer.start();
  const sidecar = await startSidecarProcess(
    [
      "--nats",
      nats.url,
      "--agent",
      "bench/mem",
      "--proxy-listen",
      "127.0.0.1:0",
      "--provider",
      `gpu=${emulator.url},vram=81920,parallel=16,context=8192`,
    ],
    {
      KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:8b","score":50}]',
      ...RUNTIME_ENV,
    },
  );
  const pid = sidecar.proc.pid!;
  const client = schedulerClient(sidecar.apiAddress);
  const proxy = `http://${sidecar.proxyAddress}`;
  const cycle = async (i: number) => {
    const r = await client.call("Place", {
      promptChars: 2000,
      threadId: `t${i % 500}`,
      conversationId: `api-${i % (4 * MAX_CONVERSATIONS)}`,
    });
    if (r.result !== "placement") throw new Error(`bench memory: refused ${JSON.stringify(r)}`);
    await client.call("Release", {
      ticketId: r.placement.ticketId,
      outcome: "CALL_OUTCOME_SUCCEEDED",
      latencyMs: 5,
      promptTokens: 500,
      promptChars: 2000,
    });
  };
  let chats = 0;
  const proxied = async () => {
    // A conversation of its own (its first question differs), MESSAGES messages long.
    const n = chats++;
    const messages = Array.from({ length: MESSAGES }, (_, k) => ({
      role: k === 0 ? "system" : k % 2 === 1 ? "user" : "assistant",
      content: k === 1 ? `question ${n}: ${"x ".repeat(40)}` : `message ${k} ${"y ".repeat(20)}`,
    }));
    const res = await fetch(`${proxy}/api/chat`, {
      method: "POST",
      body: JSON.stringify({ model: "qwen3:8b", messages, options: { num_predict: 8 } }),
    });
    if (res.status !== 200) throw new Error(`bench memory: proxy answered ${res.status}`);
    await res.arrayBuffer();
  };
  try {
    await sleep(2000);
    const idle = rssMb(pid);
    const heapIdle = await heapMb(sidecar.apiAddress);
    await pool(CYCLES, cycle);
    await pool(PROXIED_PER_PHASE, proxied);
    await sleep(2000);
    const at10k = rssMb(pid);
    const heap10k = await heapMb(sidecar.apiAddress);
    await sleep(SETTLE_MS);
    const settled10k = rssMb(pid);
    await pool(CYCLES, cycle);
    await pool(PROXIED_PER_PHASE, proxied);
    await sleep(2000);
    const at20k = rssMb(pid);
    const heap20k = await heapMb(sidecar.apiAddress);
    await sleep(SETTLE_MS);
    const settled20k = rssMb(pid);
    const heapSettled = await heapMb(sidecar.apiAddress);
    if (heap10k.conversations !== MAX_CONVERSATIONS || heap20k.conversations !== MAX_CONVERSATIONS) {
      throw new Error(
        `bench memory: the conversation table held ${heap10k.conversations} and ${heap20k.conversations}, not ${MAX_CONVERSATIONS}`,
      );
    }
    const result = {
      rss_idle_mb: idle,
      rss_10k_mb: at10k,
      rss_20k_mb: at20k,
      growth_20k_over_10k: Math.round((at20k / at10k) * 1000) / 1000,
      // The same after SETTLE_MS more of idling: what the sidecar holds between bursts.
      rss_10k_settled_mb: settled10k,
      rss_20k_settled_mb: settled20k,
      heap_total_20k_settled_mb: heapSettled.total,
      settle_ms: SETTLE_MS,
      // Where the RSS goes: V8's heap (used of total reserved) and memory outside it.
      heap_used_idle_mb: heapIdle.used,
      heap_used_10k_mb: heap10k.used,
      heap_used_20k_mb: heap20k.used,
      heap_total_20k_mb: heap20k.total,
      conversations_10k: heap10k.conversations,
      conversations_20k: heap20k.conversations,
      external_20k_mb: heap20k.external,
      cycles_per_phase: CYCLES,
      proxied_calls_per_phase: PROXIED_PER_PHASE,
      sidecar_node_options: RUNTIME_ENV.NODE_OPTIONS ?? "",
      sidecar_malloc_arena_max: RUNTIME_ENV.MALLOC_ARENA_MAX ?? "",
    };
    writeResult("memory", { ...runInfo(null), ...result });
    process.stdout.write(`${markdownTable([result])}\n`);
    process.stdout.write(
      `targets: rss ≤ 100 MB (${at20k}; ${settled20k} after ${SETTLE_MS} ms more idle); 20k within 10 % of 10k (${result.growth_20k_over_10k})\n`,
    );
  } finally {
    client.close();
    await sidecar.stop();
    await emulator.close();
    await nats.dispose();
  }
}
