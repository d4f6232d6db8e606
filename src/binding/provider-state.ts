// Overlaying published provider state (the `kubemoot_provider_state` KV value, or the bind
// dry run's --state file) onto ModelProviders: the probe is fresher than a manifest's status.
// Per the state's zero-value rule, a missing `ready` means not ready and a missing model list
// means nothing loaded; unknown totals (0) keep what the manifest says.
import type { ProviderState } from "../core/index.js";
import type { LoadedModel, ModelProvider } from "./types.js";

export function applyProviderStates(
  providers: readonly ModelProvider[],
  states: readonly ProviderState[],
): ModelProvider[] {
  const byName = new Map<string, ProviderState>();
  for (const s of states) byName.set(s.name, s);
  return providers.map((p) => {
    const s = byName.get(p.name);
    return s ? overlay(p, s) : p;
  });
}

function overlay(p: ModelProvider, s: ProviderState): ModelProvider {
  const footprints = s.loadedModelFootprintsMiB ?? {};
  const contexts = s.loadedModelContextLengths ?? {};
  const names = [...new Set([...(s.loadedModels ?? []), ...Object.keys(footprints)])].sort();
  const loadedModels: LoadedModel[] = names.map((name) => ({
    name,
    ...(footprints[name] !== undefined ? { sizeMiB: footprints[name] } : {}),
    ...(contexts[name] !== undefined ? { contextLength: contexts[name] } : {}),
  }));
  const used = Object.values(footprints).reduce((a, b) => a + Math.max(b, 0), 0);
  const cap = p.status.capacity ?? {};
  return {
    ...p,
    status: {
      ...p.status,
      ready: s.ready === true,
      capacity: {
        ...cap,
        ...(s.totalVramMiB > 0 ? { vramTotalMiB: s.totalVramMiB } : {}),
        ...(s.maxParallel > 0 ? { maxParallel: s.maxParallel } : {}),
        ...(s.contextLength > 0 ? { contextLength: s.contextLength } : {}),
        vramUsedMiB: used,
        loadedModels,
      },
    },
  };
}
