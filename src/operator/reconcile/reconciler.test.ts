import { afterEach, describe, expect, it } from "vitest";
import type { BindResult, ClusterSnapshot, Model, ModelProvider } from "../../binding/index.js";
import type { ProviderState } from "../../core/index.js";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import {
  type BindingSink,
  type ManifestSource,
  type ProviderInfo,
  providerInfos,
  type SinkReport,
} from "../sources/index.js";
import { type ReconcileResult, type Reconciler, startReconciler } from "./reconciler.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function provider(name: string, ready = true): ModelProvider {
  return {
    namespace: "kubemoot",
    name,
    labels: {},
    spec: { type: "ollama", endpoint: `http://${name}:11434` },
    status: { ready },
  };
}

function model(name: string, providerRef: string, ready = true): Model {
  return {
    namespace: "kubemoot",
    name,
    labels: { "capability/tool-calling": "true", latencyClass: "medium" },
    spec: { model: name.replace("-", ":"), providerRef },
    status: { ready },
  };
}

function world(o: { providerReady?: boolean; modelReady?: boolean } = {}): ClusterSnapshot {
  return {
    models: [model("qwen3-8b", "gpu", o.modelReady ?? true)],
    providers: [provider("gpu", o.providerReady ?? true)],
    agents: [
      { namespace: "crew", name: "a", labels: { "kubemoot.ai/crew": "c" }, spec: { capabilities: [] } },
    ],
    policies: [
      {
        namespace: "crew",
        name: "pol",
        spec: {
          crewRef: "c",
          archetypeRef: "consent-3",
          qualityBias: {},
          rules: [{ phase: "mulling", require: { matchLabels: { "capability/tool-calling": "true" } } }],
        },
      },
    ],
    archetypes: [],
  };
}

class MemorySource implements ManifestSource {
  readonly kind = "memory";
  listener: ((reason: string) => void) | undefined;
  resyncs = 0;
  stopped = false;
  constructor(
    public snap: ClusterSnapshot,
    readonly statusAuthority: "source" | "reconciler" = "reconciler",
  ) {}
  async start(onChange: (reason: string) => void) {
    this.listener = onChange;
  }
  snapshot() {
    return this.snap;
  }
  providers(): ProviderInfo[] {
    return providerInfos(this.snap.providers);
  }
  async resync() {
    this.resyncs += 1;
  }
  async stop() {
    this.stopped = true;
  }
  change(s: ClusterSnapshot, reason = "changed") {
    this.snap = s;
    this.listener?.(reason);
  }
}

class MemorySink implements BindingSink {
  readonly kind = "memory";
  results: BindResult[] = [];
  fail = 0;
  closed = false;
  delayMs = 0;
  async write(result: BindResult): Promise<SinkReport> {
    if (this.delayMs) await sleep(this.delayMs);
    this.results.push(result);
    const failures = this.fail > 0 ? [{ target: "x", message: "boom" }] : [];
    if (this.fail > 0) this.fail -= 1;
    return { writes: 1, skipped: 0, failures, detail: {} };
  }
  async close() {
    this.closed = true;
  }
}

/** A clock that advances one second per reading. */
function ticking(): () => Date {
  let t = Date.parse("2026-05-15T15:30:00Z");
  return () => {
    t += 1_000;
    return new Date(t);
  };
}

let running: Reconciler | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

async function start(
  source: MemorySource,
  sink: MemorySink,
  o: Partial<Parameters<typeof startReconciler>[0]> = {},
): Promise<{ r: Reconciler; results: ReconcileResult[] }> {
  const results: ReconcileResult[] = [];
  running = await startReconciler({ source, sink, debounceMs: 20, onResult: (x) => results.push(x), ...o });
  return { r: running, results };
}

describe("startReconciler", () => {
  it("binds once at start and reports the result", async () => {
    const sink = new MemorySink();
    const { r, results } = await start(new MemorySource(world()), sink);
    expect(results).toHaveLength(1);
    expect(r.lastResult).toMatchObject({
      run: 1,
      reasons: ["initial"],
      unschedulableAgents: 0,
      retryInMs: undefined,
    });
    expect(sink.results[0]!.agents[0]!.phases.mulling?.model).toBe("qwen3:8b");
  });

  it("debounces a burst of changes into one run, and batches changes during a run", async () => {
    const source = new MemorySource(world());
    const sink = new MemorySink();
    const { r, results } = await start(source, sink);
    for (let i = 0; i < 5; i++) source.change(world(), `change ${i}`);
    await sleep(60);
    await r.idle();
    expect(results).toHaveLength(2);
    expect(results[1]!.reasons).toEqual(["change 0", "change 1", "change 2", "change 3", "change 4"]);

    sink.delayMs = 50;
    const slow = r.reconcileNow("slow");
    await sleep(10);
    source.change(world(), "during 1");
    source.change(world(), "during 2");
    await slow;
    await r.idle();
    expect(results.slice(2).map((x) => x.reasons)).toEqual([["slow"], ["during 1", "during 2"]]);
  });

  it("retries while anything is unschedulable, resyncing the source first, and stops once bound", async () => {
    const source = new MemorySource(world({ providerReady: false }));
    const { r, results } = await start(source, new MemorySink(), { retryMs: 40 });
    expect(r.lastResult).toMatchObject({ unschedulableAgents: 1, retryInMs: 40 });
    await until(() => results.length >= 3, "two retries");
    expect(results.at(-1)!.reasons).toEqual(["unschedulable retry"]);
    expect(source.resyncs).toBeGreaterThanOrEqual(2);

    source.snap = world(); // fixed without a notification: the next retry sees it
    await until(() => r.lastResult!.unschedulableAgents === 0, "the retry that binds");
    await r.idle();
    expect(r.lastResult).toMatchObject({ unschedulableAgents: 0, retryInMs: undefined });
    const n = results.length;
    await sleep(100);
    expect(results).toHaveLength(n);
  });

  it("retries failed writes with exponential backoff capped at the retry interval", async () => {
    const sink = new MemorySink();
    sink.fail = 4;
    const { r, results } = await start(new MemorySource(world()), sink, { errorBackoffMs: 10, retryMs: 35 });
    await until(() => results.length >= 5, "four retries");
    await r.idle();
    expect(results.slice(0, 5).map((x) => x.retryInMs)).toEqual([10, 20, 35, 35, undefined]);
    expect(results.at(-1)!.report.failures).toEqual([]);
    expect(results.slice(1, 5).every((x) => x.reasons[0] === "retry after failed writes")).toBe(true);
  });

  it("remembers statuses for a status-less source: stable transition times and observedAt", async () => {
    const now = ticking();
    const source = new MemorySource(world({ modelReady: false }));
    const sink = new MemorySink();
    const { r } = await start(source, sink, { now });
    const first = sink.results[0]!.agents[0]!.status;
    await r.reconcileNow();
    const second = sink.results[1]!.agents[0]!.status;
    expect(second.conditions[0]!.lastTransitionTime).toBe(first.conditions[0]!.lastTransitionTime);
    expect(second.scheduling.lastUnschedulable!.observedAt).toBe(
      first.scheduling.lastUnschedulable!.observedAt,
    );
    expect(second).toEqual(first);

    // A different reason is a new observation.
    source.snap = { ...world(), models: [] };
    const third = (await r.reconcileNow()).bind.agents[0]!.status;
    expect(third.scheduling.lastUnschedulable!.reason).not.toBe(first.scheduling.lastUnschedulable!.reason);
    expect(third.scheduling.lastUnschedulable!.observedAt).not.toBe(
      first.scheduling.lastUnschedulable!.observedAt,
    );
  });

  it("with a status-holding source, binds from the source's status only", async () => {
    const now = ticking();
    const sink = new MemorySink();
    const { r } = await start(new MemorySource(world({ modelReady: false }), "source"), sink, { now });
    await r.reconcileNow();
    const [a, b] = sink.results.map((x) => x.agents[0]!.status.scheduling.lastUnschedulable!.observedAt);
    expect(a).not.toBe(b); // the source never stored the first status
  });

  it("overlays provider states and reconciles when they change", async () => {
    const source = new MemorySource(world());
    const { r } = await start(source, new MemorySink());
    const down: ProviderState = {
      name: "gpu",
      endpoint: "http://gpu:11434",
      maxParallel: 1,
      activeCount: 0,
      queueDepth: 0,
      loadedModels: [],
      ready: false,
      lastProbedAt: "",
      totalVramMiB: 0,
      loadedModelFootprintsMiB: {},
      availableModelFootprintsMiB: {},
      contextLength: 0,
      loadedModelContextLengths: {},
    };
    r.setProviderStates([down]);
    await sleep(50);
    await r.idle();
    expect(r.lastResult).toMatchObject({ reasons: ["provider states"], unschedulableAgents: 1 });
    expect(r.lastResult!.bind.agents[0]!.unschedulable[0]!.reason).toContain("provider not ready");
  });

  it("announces the provider list at start and only when it changes", async () => {
    const seen: ProviderInfo[][] = [];
    const source = new MemorySource(world());
    const { r } = await start(source, new MemorySink(), { onProviders: (p) => seen.push(p) });
    await r.reconcileNow();
    expect(seen.map((l) => l.map((p) => p.name))).toEqual([["gpu"]]);
    expect(r.providers()).toEqual(seen[0]);
    source.change({ ...world(), providers: [provider("gpu"), provider("gpu-2")] });
    await sleep(50);
    await r.idle();
    expect(seen.map((l) => l.map((p) => p.name))).toEqual([["gpu"], ["gpu", "gpu-2"]]);
  });

  it("stop() stops the source, closes the sink and refuses new work", async () => {
    const source = new MemorySource(world({ providerReady: false }));
    const sink = new MemorySink();
    const { r, results } = await start(source, sink, { retryMs: 20 });
    await r.stop();
    running = undefined;
    expect(source.stopped).toBe(true);
    expect(sink.closed).toBe(true);
    const n = results.length;
    await sleep(60);
    expect(results).toHaveLength(n);
    await expect(r.reconcileNow()).rejects.toSatisfy((e) => KubemootError.is(e, ErrorCode.ShuttingDown));
  });

  it("fails to start when the first bind throws, and stops the source", async () => {
    const source = new MemorySource(world());
    await expect(
      startReconciler({
        source,
        sink: new MemorySink(),
        bind: { strategy: "fastest" as never },
      }),
    ).rejects.toSatisfy((e) => KubemootError.is(e, ErrorCode.InvalidArgument));
    expect(source.stopped).toBe(true);
  });

  it("refuses invalid intervals", async () => {
    await expect(
      startReconciler({ source: new MemorySource(world()), sink: new MemorySink(), retryMs: 0 }),
    ).rejects.toThrow(/retryMs/);
  });
});
