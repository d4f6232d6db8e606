// Builders for state tests: provider states in Kubemoot's shape.
import type { ProviderState } from "../../src/core/shapes.js";

export function providerState(name: string, over: Partial<ProviderState> = {}): ProviderState {
  return {
    name,
    endpoint: `http://${name}:11434`,
    maxParallel: 1,
    activeCount: 0,
    queueDepth: 0,
    loadedModels: Object.keys(over.loadedModelFootprintsMiB ?? {}),
    ready: true,
    lastProbedAt: new Date().toISOString(),
    totalVramMiB: 24563,
    loadedModelFootprintsMiB: {},
    availableModelFootprintsMiB: {},
    contextLength: 8192,
    loadedModelContextLengths: {},
    ...over,
  };
}

/** A manual clock for leases and expiry. */
export class ManualClock {
  constructor(public ms = Date.now()) {}
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}
