// The real-engine case of bench proxy (docs/benchmarks.md): OpenAI chat streamed from a real
// llama.cpp (`kubemoot-scheduler engine`, node-llama-cpp on the CPU, the generated ~100 MB
// `bench` model, 2 slots) directly, vs through a sidecar process whose proxy places every call
// there (the sidecar probes the engine itself, as the operator would). 1 stream: the TTFB the
// sidecar adds; 2 streams (both slots): the tokens/s ratio. Every prompt starts differently, so
// no call reuses another's prompt cache; rounds run in pairs, alternating which goes first.
// Each round starts a probe interval after the last one ended: a direct round's requests are
// foreign load to the sidecar, which waits for a slot until a probe shows them gone, and that
// wait (reported apart, real_proxied_calls_that_waited) is not the proxy's cost.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Dispatcher } from "undici";
import { startEngineProcess } from "../../src/engine-process/index.js";
import { writeLlamaGguf } from "../../src/engines/index.js";
import { repoRoot } from "../../src/repo-root.js";
import { pairedRounds, type StreamCase, type StreamRound, streamCase } from "./paired.js";

export const REAL_MODEL = "kubemoot-bench";
/** Words of each prompt after its unique head: prefill that costs real time. */
const PROMPT_WORDS = 120;

/** The sidecar's probe interval (ms), and the pause before each round (one interval and a margin). */
const PROBE_MS = 1000;
const SETTLE_MS = PROBE_MS + 200;

interface One {
  ttfbMs: number;
  tokens: number;
  /** X-Kubemoot-Queue-Wait-Ms of a proxied call. */
  waitedMs: number;
}

async function streamOne(dispatcher: Dispatcher, base: string, i: number, maxTokens: number): Promise<One> {
  const url = new URL(base);
  const content = `Call ${i} of the benchmark. ${"Schedule the agents onto the GPUs fairly. ".repeat(PROMPT_WORDS / 6)}`;
  const t0 = performance.now();
  const res = await dispatcher.request({
    origin: url.origin,
    path: "/v1/chat/completions",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: REAL_MODEL,
      messages: [{ role: "user", content }],
      max_tokens: maxTokens,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (res.statusCode !== 200) throw new Error(`${base}: status ${res.statusCode}: ${await res.body.text()}`);
  let ttfbMs = 0;
  let tail = "";
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    if (ttfbMs === 0) ttfbMs = performance.now() - t0;
    tail = (tail + chunk.toString("utf8")).slice(-4096);
  }
  const m = /"completion_tokens":\s*(\d+)/.exec(tail);
  if (!m || !tail.includes("[DONE]")) throw new Error(`${base}: stream ended without usage and [DONE]`);
  return { ttfbMs, tokens: Number(m[1]), waitedMs: Number(res.headers["x-kubemoot-queue-wait-ms"] ?? 0) };
}

async function round(
  dispatcher: Dispatcher,
  base: string,
  concurrency: number,
  seq: number,
  maxTokens: number,
): Promise<StreamRound & { waits: number[] }> {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const t0 = performance.now();
  const all = await Promise.all(
    Array.from({ length: concurrency }, (_, k) => streamOne(dispatcher, base, seq * 100 + k, maxTokens)),
  );
  const tokens = all.reduce((n, r) => n + r.tokens, 0);
  return {
    ttfb: all.map((r) => r.ttfbMs),
    rate: tokens / ((performance.now() - t0) / 1000),
    waits: all.map((r) => r.waitedMs),
  };
}

/** A sidecar process (embedded state) probing the engine as a llama.cpp provider; its proxy URL. */
async function startSidecar(engineUrl: string): Promise<{ proc: ChildProcess; proxy: string }> {
  const proc = spawn(
    process.execPath,
    [
      path.join(repoRoot(), "bin", "kubemoot-scheduler.js"),
      "sidecar",
      "--state",
      "memory",
      "--listen",
      "127.0.0.1:0",
      "--proxy-listen",
      "127.0.0.1:0",
      "--agent",
      "bench/real",
      "--provider",
      `real=${engineUrl},engine=llamacpp,vram=4096`,
      "--probe-interval-ms",
      String(PROBE_MS),
    ],
    { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, KUBEMOOT_LOG_LEVEL: "warn" } },
  );
  let out = "";
  const proxy = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on("data", (d) => {
      out += d;
      const m = /proxy on (\S+)/.exec(out);
      if (m) resolve(`http://${m[1]}`);
    });
    proc.once("exit", (code) => reject(new Error(`sidecar exited with ${code}: ${out}`)));
  });
  return { proc, proxy };
}

export interface RealEngineCase {
  c1: StreamCase;
  c2: StreamCase;
  modelBytes: number;
  /** Proxied calls that waited in the sidecar for a slot, of all proxied calls measured. */
  proxiedCallsThatWaited: number;
  proxiedCalls: number;
}

/** Paired rounds against the real engine: 1 stream (`rounds` × 2 pairs) and 2 streams (`rounds` pairs). */
export async function runRealEngineCase(dispatcher: Dispatcher, rounds: number): Promise<RealEngineCase> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-bench-real-"));
  const model = writeLlamaGguf(path.join(dir, `${REAL_MODEL}.gguf`), { seed: 1, preset: "bench" });
  const engine = await startEngineProcess({ modelsDir: dir, args: ["--parallel", "2", "--ctx", "4096"] });
  let sidecar: { proc: ChildProcess; proxy: string } | undefined;
  try {
    sidecar = await startSidecar(engine.url);
    const proxy = sidecar.proxy;
    // Warm-up: the proxy's first placement and token count, connections open, pages touched.
    await round(dispatcher, engine.url, 2, 0, 16);
    await round(dispatcher, proxy, 2, 0, 16);
    const short = 32;
    const long = 192;
    const one = await pairedRounds(
      rounds * 2,
      (r) => round(dispatcher, engine.url, 1, 1000 + r, short),
      (r) => round(dispatcher, proxy, 1, 2000 + r, short),
    );
    const two = await pairedRounds(
      rounds,
      (r) => round(dispatcher, engine.url, 2, 3000 + r, long),
      (r) => round(dispatcher, proxy, 2, 4000 + r, long),
    );
    const waits = [...one.p, ...two.p].flatMap((x) => x.waits);
    return {
      c1: streamCase(one.d, one.p),
      c2: streamCase(two.d, two.p),
      modelBytes: model.bytes,
      proxiedCallsThatWaited: waits.filter((w) => w > 0).length,
      proxiedCalls: waits.length,
    };
  } finally {
    if (sidecar && sidecar.proc.exitCode === null) {
      const exited = new Promise((r) => sidecar!.proc.once("exit", r));
      sidecar.proc.kill("SIGTERM");
      await exited;
    }
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
