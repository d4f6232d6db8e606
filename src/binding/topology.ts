// Topology spread (docs/rules/binding.md "Topology spread"): an agent's bindings for the phases in
// phaseKeys go to distinct values of topologyKey when possible. A provider without the label
// has no domain and never satisfies the spread (as kube-scheduler treats nodes without the key).
import { objectKey } from "./order.js";
import type { ModelProvider, TopologySpread } from "./types.js";

export const PROVIDER_TOPOLOGY_KEY = "provider";

/** The provider's value of the topology key, or undefined when it has none. */
export function topologyDomain(provider: ModelProvider, topologyKey: string): string | undefined {
  if (topologyKey === PROVIDER_TOPOLOGY_KEY) return objectKey(provider);
  return provider.labels[topologyKey];
}

/** How a domain is shown in messages: `provider=ollama-a`, `zone=rack-1`. */
export function describeDomain(provider: ModelProvider, topologyKey: string): string {
  const value = topologyKey === PROVIDER_TOPOLOGY_KEY ? provider.name : provider.labels[topologyKey];
  return `${topologyKey}=${value ?? "<none>"}`;
}

/** Whether the spread constrains this phase. */
export function spreadApplies(spread: TopologySpread | undefined, phase: string): spread is TopologySpread {
  return spread?.phaseKeys.includes(phase) === true;
}

/** Whether a provider keeps the spread, given the domains earlier phases already took. */
export function keepsSpread(
  provider: ModelProvider,
  topologyKey: string,
  taken: ReadonlySet<string>,
): boolean {
  const domain = topologyDomain(provider, topologyKey);
  return domain !== undefined && !taken.has(domain);
}
