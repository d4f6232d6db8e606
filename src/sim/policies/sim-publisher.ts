// The operator's publisher in the simulation (docs/rules/engines.md, docs/rules/ollama.md): it
// probes each card's /api/ps (and each fixed-model engine's metrics) and publishes the provider
// state the sidecars decide on, every probe interval, or at every change when the interval is 0.
import type { ProviderState } from "../../core/index.js";
import { SimFixedEngine } from "../fixed-engine.js";
import type { SimOllama } from "../ollama.js";
import { EPOCH_MS } from "../types.js";
import type { World } from "../world.js";
import type { SharedStateModel } from "./shared-state.js";

/** How often the publisher probes each GPU (ms). */
const DEFAULT_PROBE_MS = 10_000;

export class SimPublisher {
  readonly probeMs: number;

  constructor(
    private readonly w: World,
    private readonly state: SharedStateModel,
  ) {
    this.probeMs = w.o.probeIntervalMs ?? DEFAULT_PROBE_MS;
  }

  /** Probes every provider once, then on its own phase of the interval while traffic remains. */
  start(): void {
    const all = this.w.providers;
    all.forEach((g, i) => {
      this.probe(g);
      if (this.probeMs > 0) {
        const phase = Math.round((this.probeMs * (i + 1)) / (all.length + 1));
        this.schedule(g, phase);
      }
    });
  }

  /** A card's runners changed: published at once when the publisher follows every change. */
  changed(g: SimOllama): void {
    if (this.probeMs === 0) this.probe(g);
  }

  private schedule(g: SimOllama | SimFixedEngine, at: number): void {
    this.w.loop.at(at, () => {
      this.probe(g);
      // Only while traffic remains: the run ends when the loop runs dry.
      if (this.w.busy) this.schedule(g, this.w.loop.now + this.probeMs);
    });
  }

  private order(): string[] {
    return this.w.providers.map((x) => x.name);
  }

  private probe(g: SimOllama | SimFixedEngine): void {
    if (g instanceof SimFixedEngine) this.probeEngine(g);
    else this.probeOllama(g);
  }

  /** What a fixed-model engine's metrics say: what it serves, its slots, queue and KV usage. */
  private probeEngine(e: SimFixedEngine): void {
    const contexts: Record<string, number> = {};
    for (const m of e.config.serves) contexts[m] = e.config.contextLength;
    const state: ProviderState = {
      name: e.name,
      endpoint: endpointOf(e),
      engine: e.config.engine,
      maxParallel: e.config.slots,
      activeCount: e.active,
      queueDepth: e.queued,
      loadedModels: [...e.config.serves],
      ready: true,
      lastProbedAt: new Date(EPOCH_MS + this.w.loop.now).toISOString(),
      totalVramMiB: e.config.vramMiB,
      loadedModelFootprintsMiB: {},
      availableModelFootprintsMiB: {},
      contextLength: e.config.contextLength,
      loadedModelContextLengths: contexts,
      kvCacheUsage: e.kvUsage,
    };
    this.state.publish(state, this.order(), false);
  }

  /** What a card's /api/ps and /api/tags say: its runners, and the models on its disk. */
  private probeOllama(g: SimOllama): void {
    const loadedModels: string[] = [];
    const footprints: Record<string, number> = {};
    const contexts: Record<string, number> = {};
    for (const r of g.ps()) {
      loadedModels.push(r.model);
      footprints[r.model] = r.footprintMiB;
      contexts[r.model] = r.numCtx;
    }
    const available: Record<string, number> = {};
    for (const [name, spec] of g.catalog) {
      if (!(name in footprints)) available[name] = Math.ceil(spec.onDiskMiB);
    }
    const state: ProviderState = {
      name: g.name,
      endpoint: endpointOf(g),
      maxParallel: g.config.numParallel,
      activeCount: 0,
      queueDepth: 0,
      loadedModels,
      ready: true,
      lastProbedAt: new Date(EPOCH_MS + this.w.loop.now).toISOString(),
      totalVramMiB: g.config.vramMiB,
      loadedModelFootprintsMiB: footprints,
      availableModelFootprintsMiB: available,
      contextLength: g.config.contextLength,
      loadedModelContextLengths: contexts,
    };
    if (this.w.o.publishMaxLoadedModels ?? true) state.maxLoadedModels = g.config.maxLoadedModels;
    this.state.publish(state, this.order(), this.w.o.overlaySupersededByProbe ?? false);
  }
}

/** The endpoint a provider's state names (the sidecar forwards and unloads there). */
export function endpointOf(g: SimOllama | SimFixedEngine): string {
  return g instanceof SimFixedEngine ? `http://${g.name}:8000` : `http://${g.name}:11434`;
}
