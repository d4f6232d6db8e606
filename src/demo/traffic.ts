// Synthetic crew traffic: discussions arrive as a Poisson process; each brings in the crew's
// coordinator and a few other agents, and each of those makes 1–3 calls through the proxy,
// exactly as an agent whose Ollama client points at its sidecar would.
import { performance } from "node:perf_hooks";
import type { Candidate } from "../core/index.js";
import { mulberry32, type Random } from "../prng/index.js";

export interface DemoAgent {
  /** "namespace/name". */
  key: string;
  role: string;
  /** The bound preferred model (KUBEMOOT_MODEL_MODEL). */
  model: string;
  candidates: Candidate[];
}

export interface CallResult {
  atMs: number;
  agent: string;
  requested: string;
  status: number;
  model: string;
  provider: string;
  cold: boolean;
  evicted: string[];
  queueWaitMs: number;
  latencyMs: number;
  /** For refusals: the proxy's reason (gpu-busy, prompt-too-large, …). */
  reason: string;
}

export interface TrafficOptions {
  proxyUrl: string;
  agents: DemoAgent[];
  seed: number;
  /** Mean gap between discussions (ms of wall time). */
  meanGapMs: number;
  onResult(r: CallResult): void;
}

const WORDS = "cluster pod latency node error budget rollout alert metric trace deploy capacity queue".split(
  " ",
);

export class CrewTraffic {
  private readonly rand: Random;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Set<Promise<void>>();
  private readonly aborts = new Set<AbortController>();
  private discussion = 0;

  constructor(private readonly o: TrafficOptions) {
    this.rand = mulberry32(o.seed); // the same seed gives the same traffic plan
  }

  start(): void {
    this.next();
  }

  /** Stops new discussions and aborts calls in flight (their tickets are released). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const a of this.aborts) a.abort();
    await Promise.allSettled([...this.running]);
  }

  private next(): void {
    if (this.stopped) return;
    const gap = -Math.log(1 - this.rand()) * this.o.meanGapMs;
    this.timer = setTimeout(() => {
      this.track(this.runDiscussion());
      this.next();
    }, gap);
  }

  private track(p: Promise<void>): void {
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  private async runDiscussion(): Promise<void> {
    const id = ++this.discussion;
    const coordinator = this.o.agents.filter((a) => a.role === "coordinator");
    const others = this.o.agents.filter((a) => a.role !== "coordinator");
    const picked = [...coordinator];
    for (const a of others) if (this.rand() < 0.6) picked.push(a);
    await Promise.all(
      picked.map(async (agent) => {
        const calls = 1 + Math.floor(this.rand() * 3);
        for (let i = 0; i < calls && !this.stopped; i++) await this.call(agent, `d${id}`);
      }),
    );
  }

  private async call(agent: DemoAgent, thread: string): Promise<void> {
    const words = 60 + Math.floor(this.rand() * 600);
    const text = Array.from({ length: words }, () => WORDS[Math.floor(this.rand() * WORDS.length)]).join(" ");
    const predict = 64 + Math.floor(this.rand() * 448);
    const ac = new AbortController();
    this.aborts.add(ac);
    const started = performance.now();
    const base = { atMs: Date.now(), agent: agent.key, requested: agent.model };
    try {
      const res = await fetch(`${this.o.proxyUrl}/api/chat`, {
        method: "POST",
        signal: ac.signal,
        headers: {
          "content-type": "application/json",
          "x-kubemoot-agent": agent.key,
          "x-kubemoot-thread": thread,
          "x-kubemoot-candidates": JSON.stringify(agent.candidates),
        },
        body: JSON.stringify({
          model: agent.model,
          stream: true,
          messages: [
            { role: "system", content: `You are ${agent.key}, a ${agent.role}.` },
            { role: "user", content: text },
          ],
          options: { num_predict: predict },
        }),
      });
      const body = await res.text();
      let reason = "";
      if (res.status !== 200)
        reason = (JSON.parse(body) as { reason?: string }).reason ?? `http-${res.status}`;
      else if (body.includes('"error"')) reason = "error-mid-stream";
      const h = res.headers;
      this.o.onResult({
        ...base,
        status: res.status,
        model: h.get("x-kubemoot-model") ?? "",
        provider: h.get("x-kubemoot-provider") ?? "",
        cold: h.get("x-kubemoot-cold-load") === "true",
        evicted: (h.get("x-kubemoot-evicted") ?? "").split(",").filter(Boolean),
        queueWaitMs: Number(h.get("x-kubemoot-queue-wait-ms") ?? 0),
        latencyMs: performance.now() - started,
        reason,
      });
    } catch (err) {
      if (!this.stopped) {
        this.o.onResult({
          ...base,
          status: 0,
          model: "",
          provider: "",
          cold: false,
          evicted: [],
          queueWaitMs: 0,
          latencyMs: performance.now() - started,
          reason: (err as Error).name === "AbortError" ? "aborted" : "client-error",
        });
      }
    } finally {
      this.aborts.delete(ac);
    }
  }
}
