// The policies ours is compared with. Each sends the preferred model only and leaves queueing
// and eviction to Ollama (or to the fixed-model engine that serves the model): static (reconcile-time binding), round-robin, least-busy (fewest
// calls in flight) and random.
import { usableMiB } from "../../core/index.js";
import type { SimFixedEngine } from "../fixed-engine.js";
import type { SimOllama } from "../ollama.js";
import type { ScenarioAgent } from "../scenarios.js";
import type { CallState, PolicyName } from "../types.js";
import type { SimPolicy, World } from "../world.js";

export class BaselinePolicy implements SimPolicy {
  private readonly inFlight = new Map<string, number>();
  private readonly staticBinding = new Map<string, string>();
  private readonly rrNext = new Map<string, number>();

  constructor(
    private readonly w: World,
    private readonly name: Exclude<PolicyName, "ours" | "kubemoot" | "ours-no-affinity">,
  ) {
    for (const g of w.providers) this.inFlight.set(g.name, 0);
  }

  start(): void {
    if (this.name === "static") this.bindStatic();
  }
  turnStarted(): void {}
  turnEnded(): void {}
  gpuChanged(): void {}
  afterEvent(): void {}
  liveTickets(): number {
    return 0;
  }

  dispatch(call: CallState): void {
    const agent = call.turn.agent;
    const model = agent.candidates[0]!.model;
    const gpu = this.w.recorder.timed(() => this.pick(agent, model));
    if (gpu === undefined) {
      this.w.standAside(call, "model-too-large");
      return;
    }
    this.inFlight.set(gpu.name, this.inFlight.get(gpu.name)! + 1);
    this.w.runCall(call, gpu, model, () => {
      this.inFlight.set(gpu.name, this.inFlight.get(gpu.name)! - 1);
    });
  }

  /**
   * Providers that could ever serve the model, in scenario order: Ollama cards that have it and
   * whose usable VRAM could hold it, then the fixed-model engines that serve it.
   */
  private holders(model: string): Array<SimOllama | SimFixedEngine> {
    const F = this.w.models.get(model)?.footprintMiB ?? Number.POSITIVE_INFINITY;
    return [...this.cards(model, F), ...this.enginesServing(model)];
  }

  /** Ollama cards that have the model and whose usable VRAM could hold `F` MiB, in scenario order. */
  private cards(model: string, F: number): SimOllama[] {
    return this.w.gpus.filter((g) => g.catalog.has(model) && usableMiB(g.config.vramMiB) >= F);
  }

  private enginesServing(model: string): SimFixedEngine[] {
    return this.w.engines.filter((e) => e.serves(model));
  }

  /**
   * Reconcile-time binding: each agent, in order, gets its preferred model on the provider
   * with the most free VRAM that fits it, counting the models already bound there once each
   * (a provider already hosting the model fits it); round-robin among equally good ones.
   */
  private bindStatic(): void {
    const gpus = this.w.gpus;
    const boundModels = new Map<string, Set<string>>(gpus.map((g) => [g.name, new Set()]));
    const free = new Map<string, number>(gpus.map((g) => [g.name, usableMiB(g.config.vramMiB)]));
    let rr = 0;
    for (const agent of this.w.sc.agents) {
      const model = agent.candidates[0]!.model;
      const F = this.w.models.get(model)?.footprintMiB ?? 0;
      // A model a fixed-model engine serves is bound there (its VRAM is the engine's own).
      const engines = this.enginesServing(model);
      if (engines.length > 0) {
        this.staticBinding.set(agent.id, engines[rr++ % engines.length]!.name);
        continue;
      }
      const holders = this.cards(model, F);
      if (holders.length === 0) continue;
      const fits = (g: SimOllama) => boundModels.get(g.name)!.has(model) || free.get(g.name)! >= F;
      const pool = holders.some(fits) ? holders.filter(fits) : holders;
      const eff = (g: SimOllama) =>
        boundModels.get(g.name)!.has(model) ? free.get(g.name)! + F : free.get(g.name)!;
      const best = Math.max(...pool.map(eff));
      const ties = pool.filter((g) => eff(g) === best);
      const pick = ties[rr++ % ties.length]!;
      this.staticBinding.set(agent.id, pick.name);
      if (!boundModels.get(pick.name)!.has(model)) {
        boundModels.get(pick.name)!.add(model);
        free.set(pick.name, free.get(pick.name)! - F);
      }
    }
  }

  private pick(agent: ScenarioAgent, model: string): SimOllama | SimFixedEngine | undefined {
    switch (this.name) {
      case "static": {
        const name = this.staticBinding.get(agent.id);
        return name === undefined ? undefined : this.w.provider(name);
      }
      case "round-robin": {
        const hs = this.holders(model);
        if (hs.length === 0) return undefined;
        const i = this.rrNext.get(model) ?? 0;
        this.rrNext.set(model, i + 1);
        return hs[i % hs.length];
      }
      case "least-busy": {
        let best: SimOllama | SimFixedEngine | undefined;
        for (const g of this.holders(model)) {
          if (best === undefined || this.inFlight.get(g.name)! < this.inFlight.get(best.name)!) best = g;
        }
        return best;
      }
      case "random": {
        const hs = this.holders(model);
        return hs.length === 0 ? undefined : this.w.rng.pick(hs);
      }
    }
  }
}
