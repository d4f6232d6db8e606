// Crews of real sidecar processes calling one emulated card through their Ollama proxies, on a
// nats-server of their own (docs/rules/fairness.md): each crew's sidecars, their agents' call
// loops (closed loops, or paced arrivals), and per crew what the engine answered, counted by
// this client from the answers themselves (prompt_eval_count + 2 × eval_count), not from the
// sidecars. Used by test/sidecar/fair-share.test.ts and bench fairness.
import { randomBytes } from "node:crypto";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import { percentile } from "../../src/sim/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "./nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "./sidecar-process.js";

export const FAIR_MODEL = "fair-m";

export interface CrewSpec {
  /** The crew's namespace (its crew, fair share's default). */
  name: string;
  /** Sidecar processes (pods) of the crew. */
  sidecars: number;
  /** Concurrent call loops over the crew's sidecars (spread round-robin). */
  loops: number;
  /** KUBEMOOT_CREW_WEIGHT; default 1. */
  weight?: number;
  /** X-Kubemoot-Priority of the crew's calls; default none (the sidecar's, standard). */
  priority?: string;
  /** Pause between a loop's calls (ms); default 0 (always waiting: saturation). */
  thinkMs?: number;
}

export interface CallRecord {
  crew: string;
  endedAt: number;
  /** prompt_eval_count + 2 × eval_count of the answer. */
  tokens: number;
  status: number;
  /** X-Kubemoot-Queue-Wait-Ms. */
  queueWaitMs: number;
  /** The call's wall time less its queue wait (ms): its service, as the client saw it. */
  serviceMs: number;
  /** A failed call's answer (its first 200 characters); "" for a success. */
  error: string;
  /** X-Kubemoot-Priority and X-Kubemoot-Queue-Position of the answer. */
  priority: string;
  queuePosition: number;
}

export interface FairCard {
  nats: NatsServer;
  emulator: EmulatorHandle;
  close(): Promise<void>;
}

export interface CardOptions {
  /** Slots of the card's copy (OLLAMA_NUM_PARALLEL). */
  slots: number;
  /** Wall ms per emulated ms. */
  timeScale: number;
  /** Tokens generated per emulated second. */
  tokensPerS: number;
}

/** A nats-server and one emulated card with FAIR_MODEL loaded, its state published. */
export async function startFairCard(o: CardOptions): Promise<FairCard> {
  const nats = await NatsServer.start();
  const emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { [FAIR_MODEL]: 5000 },
    contextLength: 8192,
    numParallel: o.slots,
    timeScale: o.timeScale,
    tokensPerS: o.tokensPerS,
    keepAlive: -1,
  });
  const operator: StateStore = await openStateStore(nats.url);
  const publisher = new ProviderPublisher({ sink: operator.providerWriter, intervalMs: 2_000 });
  publisher.start();
  await publisher.setProviders([
    { name: "card", endpoint: emulator.url, totalVramMiB: 24563, maxParallel: o.slots, contextLength: 8192 },
  ]);
  // Loaded before anyone calls: the runs measure admission, not a cold load.
  await fetch(`${emulator.url}/api/generate`, {
    method: "POST",
    body: JSON.stringify({ model: FAIR_MODEL, keep_alive: -1 }),
  }).then((r) => r.text());
  await publisher.probeNow();
  return {
    nats,
    emulator,
    async close() {
      await publisher.stop();
      await operator.close();
      await emulator.close();
      await nats.dispose();
    },
  };
}

export interface CrewRun {
  records: CallRecord[];
  sidecars: SidecarProcess[];
  /** A crew's sidecars, by pod index. */
  sidecarsOf(crew: string): SidecarProcess[];
  stop(): Promise<void>;
}

/**
 * Starts the crews' sidecars (fair share on or off) and their loops; they call until stop().
 * `outputTokens` per call (num_predict); every prompt differs, so no prompt cache helps.
 */
export async function startCrews(
  card: FairCard,
  crews: readonly CrewSpec[],
  o: { fair: boolean; outputTokens: number; env?: Record<string, string> },
): Promise<CrewRun> {
  const sidecars: SidecarProcess[] = [];
  const byCrew = new Map<string, SidecarProcess[]>();
  await Promise.all(
    crews.flatMap((c) =>
      Array.from({ length: c.sidecars }, async (_, i) => {
        const s = await startSidecarProcess(
          ["--nats", card.nats.url, "--agent", `${c.name}/pod${i}`, "--proxy-listen", "127.0.0.1:0"],
          {
            KUBEMOOT_MODEL_CANDIDATES_MULLING: `[{"model":"${FAIR_MODEL}","score":50}]`,
            KUBEMOOT_FAIR_SHARE: String(o.fair),
            KUBEMOOT_CREW_WEIGHT: String(c.weight ?? 1),
            KUBEMOOT_DISCUSS_GPU_WAIT_LIMIT_SECONDS: "300",
            KUBEMOOT_LOG_LEVEL: "warn",
            ...o.env,
          },
          { timeoutMs: 60_000 },
        );
        sidecars.push(s);
        const list = byCrew.get(c.name) ?? [];
        list[i] = s;
        byCrew.set(c.name, list);
      }),
    ),
  );
  const records: CallRecord[] = [];
  let stopping = false;
  const loops = crews.flatMap((c) =>
    Array.from({ length: c.loops }, async (_, k) => {
      const pods = byCrew.get(c.name)!;
      for (let n = 0; !stopping; n++) {
        // Each loop keeps to a pod of its own when there are as many; else they take turns.
        const pod = pods[(k + n * c.loops) % pods.length]!;
        const r = await oneCall(pod, c, o.outputTokens);
        if (!stopping) records.push(r);
        // A pod that is gone (a test killed it) refuses at once: do not spin on it.
        if (r.status === 0) await new Promise((res) => setTimeout(res, 200));
        if (c.thinkMs && !stopping) await new Promise((res) => setTimeout(res, c.thinkMs));
      }
    }),
  );
  return {
    records,
    sidecars,
    sidecarsOf: (crew) => byCrew.get(crew) ?? [],
    async stop() {
      stopping = true;
      await Promise.all(loops);
      await Promise.all(sidecars.map((s) => s.stop()));
    },
  };
}

async function oneCall(pod: SidecarProcess, c: CrewSpec, outputTokens: number): Promise<CallRecord> {
  const started = performance.now();
  const gone: CallRecord = {
    crew: c.name,
    endedAt: Date.now(),
    tokens: 0,
    status: 0,
    queueWaitMs: 0,
    serviceMs: 0,
    error: "connection failed",
    priority: "",
    queuePosition: 0,
  };
  const res = await fetch(`http://${pod.proxyAddress}/api/chat`, {
    method: "POST",
    headers: c.priority ? { "x-kubemoot-priority": c.priority } : {},
    body: JSON.stringify({
      model: FAIR_MODEL,
      // A prompt of its own: no call finds another's prefix cached.
      messages: [{ role: "user", content: `${randomBytes(6).toString("hex")} ${"w ".repeat(150)}` }],
      options: { num_predict: outputTokens },
      stream: false,
    }),
  }).catch(() => undefined);
  if (res === undefined) return gone;
  const text = await res.text().catch(() => "");
  const body = (() => {
    try {
      return JSON.parse(text) as { prompt_eval_count?: number; eval_count?: number };
    } catch {
      return {};
    }
  })();
  const wall = performance.now() - started;
  const queueWaitMs = Number(res.headers.get("x-kubemoot-queue-wait-ms") ?? 0);
  return {
    crew: c.name,
    endedAt: Date.now(),
    tokens: (body.prompt_eval_count ?? 0) + 2 * (body.eval_count ?? 0),
    status: res.status,
    queueWaitMs,
    serviceMs: Math.max(0, wall - queueWaitMs),
    error: res.status === 200 ? "" : text.slice(0, 200),
    priority: res.headers.get("x-kubemoot-priority") ?? "",
    queuePosition: Number(res.headers.get("x-kubemoot-queue-position") ?? 0),
  };
}

/** Per crew, the tokens of the calls that ended within [from, to). */
export function tokensByCrew(records: readonly CallRecord[], from: number, to: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of records) {
    if (r.status !== 200 || r.endedAt < from || r.endedAt >= to) continue;
    out.set(r.crew, (out.get(r.crew) ?? 0) + r.tokens);
  }
  return out;
}

/** A crew's p95 queue wait and its calls' mean service (ms); NaN for a crew without calls. */
export function crewWait(
  records: readonly CallRecord[],
  crew: string,
): { p95WaitMs: number; serviceMs: number } {
  const own = records.filter((r) => r.crew === crew);
  if (own.length === 0) return { p95WaitMs: Number.NaN, serviceMs: Number.NaN };
  return {
    p95WaitMs: percentile(
      own.map((r) => r.queueWaitMs),
      95,
    ),
    serviceMs: own.reduce((a, r) => a + r.serviceMs, 0) / own.length,
  };
}

/** Records a run makes during `windowMs`, after `warmupMs` of settling; the window's bounds. */
export async function measureWindow(
  warmupMs: number,
  windowMs: number,
): Promise<{ from: number; to: number }> {
  await new Promise((r) => setTimeout(r, warmupMs));
  const from = Date.now();
  await new Promise((r) => setTimeout(r, windowMs));
  return { from, to: Date.now() };
}
