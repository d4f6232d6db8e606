// The web view's memory under load (docs/web-view.md "Bounds", issue 33), as deployed: the view in
// the `operator` process on a real nats-server, followed by 20 Server-Sent-Events clients, while
// a `sidecar` process's proxy takes a burst of calls from 16 agents to two emulated cards at ×10
// speed. WEB_BURST_S seconds of wall time (default 60) are ten times as many seconds of emulated
// GPU time: 10 minutes by default. The operator's RSS may grow by at most 50 MB from the end of
// the warm-up to the end of the burst, and every client keeps receiving decisions to the end.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEMO_FLEETS, type DemoFleet, startDemoFleet, writeDemoManifests } from "../../src/demo/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { type StandaloneProcess, startOperatorProcess } from "../helpers/standalone-process.js";

const BURST_S = Number(process.env.WEB_BURST_S ?? 60);
const WARMUP_S = 10;
const CLIENTS = Number(process.env.WEB_CLIENTS ?? 20);
const AGENTS = 16;
const GROWTH_LIMIT_MB = 50;

let nats: NatsServer;
let fleet: DemoFleet;
let dir: string;
let operator: StandaloneProcess;
let sidecar: SidecarProcess;

beforeAll(async () => {
  nats = await NatsServer.start();
  fleet = await startDemoFleet(10, DEMO_FLEETS.prod);
  dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-webmem-"));
  writeDemoManifests(path.join(dir, "manifests"), fleet);
  operator = await startOperatorProcess([
    ...["--manifests", path.join(dir, "manifests"), "--bindings-dir", path.join(dir, "bindings")],
    ...["--nats", nats.url, "--web-listen", "127.0.0.1:0", "--probe-interval-ms", "500"],
  ]);
  sidecar = await startSidecarProcess([
    ...["--nats", nats.url, "--agent", "crew-homelab/synthesizer", "--proxy-listen", "127.0.0.1:0"],
  ]);
}, 60_000);

afterAll(async () => {
  await sidecar?.stop();
  await operator?.stop();
  await fleet?.close();
  await nats?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return kb / 1024;
}

/** One SSE client: counts the events it reads, by name, until aborted. */
function follow(url: string, signal: AbortSignal) {
  const counts = new Map<string, number>();
  const done = (async () => {
    const res = await fetch(`${url}api/events`, { signal });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let end = buf.indexOf("\n\n");
        while (end >= 0) {
          const name = /^event: (\w+)/m.exec(buf.slice(0, end))?.[1];
          if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
          buf = buf.slice(end + 2);
          end = buf.indexOf("\n\n");
        }
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    }
  })();
  return { counts, done };
}

/** One agent calling through the proxy as fast as its answers come, until the deadline. */
async function agent(n: number, proxy: string, until: number): Promise<number> {
  let calls = 0;
  const model = n % 3 === 0 ? "qwen3:14b" : "qwen3:8b";
  while (Date.now() < until) {
    const res = await fetch(`http://${proxy}/api/chat`, {
      method: "POST",
      headers: { "x-kubemoot-candidates": JSON.stringify([{ model, score: 90 }]) },
      body: JSON.stringify({
        model,
        stream: false,
        messages: [{ role: "user", content: `step ${calls} of agent ${n}` }],
        options: { num_predict: 24 },
      }),
    });
    await res.text();
    calls++;
  }
  return calls;
}

it(`keeps RSS within ${GROWTH_LIMIT_MB} MB through a burst with ${CLIENTS} browsers following`, async () => {
  const pid = operator.proc.pid!;
  const stop = new AbortController();
  const clients = Array.from({ length: CLIENTS }, () => follow(operator.webUrl, stop.signal));
  const until = Date.now() + (WARMUP_S + BURST_S) * 1000;
  const agents = Array.from({ length: AGENTS }, (_, n) => agent(n, sidecar.proxyAddress, until));
  await new Promise((r) => setTimeout(r, WARMUP_S * 1000));
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 1000);
  const calls = (await Promise.all(agents)).reduce((a, b) => a + b, 0);
  clearInterval(sampler);
  const after = rssMb(pid);
  peak = Math.max(peak, after);
  const seen = clients.map((c) => ({
    snapshot: c.counts.get("snapshot") ?? 0,
    decision: c.counts.get("decision") ?? 0,
  }));
  stop.abort();
  await Promise.all(clients.map((c) => c.done));
  console.log(
    `web memory: ${calls} calls in ${BURST_S + WARMUP_S} s; operator RSS ${before.toFixed(1)} MB after warm-up, ` +
      `${after.toFixed(1)} MB at the end, peak ${peak.toFixed(1)} MB; decisions per client ` +
      `${Math.min(...seen.map((s) => s.decision))}–${Math.max(...seen.map((s) => s.decision))}`,
  );
  expect(calls).toBeGreaterThan(AGENTS * 10);
  for (const s of seen) {
    expect(s.snapshot).toBe(1);
    expect(s.decision).toBeGreaterThan(BURST_S);
  }
  expect(peak - before).toBeLessThanOrEqual(GROWTH_LIMIT_MB);
}, 240_000);
