// ModelProviders → the list the provider publisher probes. Sorted by namespace (cluster scope
// first), then name, so that a change of the list can be detected by comparing JSON.
import type { ModelProvider } from "../../binding/index.js";
import { DEFAULT_ENGINE } from "../../core/index.js";
import type { ProviderInfo } from "./types.js";

const DEFAULT_WEIGHT = 100;

export function providerInfos(providers: readonly ModelProvider[]): ProviderInfo[] {
  return [...providers]
    .sort((a, b) => cmp(a.namespace ?? "", b.namespace ?? "") || cmp(a.name, b.name))
    .map((p) => {
      const cap = p.status.capacity;
      const hint = (n: number | undefined) => (n !== undefined && n > 0 ? n : undefined);
      const maxParallel = hint(cap?.maxParallel);
      const contextLength = hint(cap?.contextLength);
      const vramTotalMiB = hint(cap?.vramTotalMiB);
      const memoryMiB = p.spec.scheduling?.memoryMiB;
      return {
        name: p.name,
        ...(p.namespace !== undefined ? { namespace: p.namespace } : {}),
        type: p.spec.type,
        engine: p.spec.engine ?? DEFAULT_ENGINE,
        endpoint: p.spec.endpoint,
        weight: p.spec.scheduling?.weight ?? DEFAULT_WEIGHT,
        ...(memoryMiB !== undefined ? { memoryMiB } : {}),
        ...(maxParallel !== undefined ? { maxParallel } : {}),
        ...(contextLength !== undefined ? { contextLength } : {}),
        ...(vramTotalMiB !== undefined ? { vramTotalMiB } : {}),
        labels: { ...p.labels },
      };
    });
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
