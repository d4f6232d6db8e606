// The endpoint allowlist an injected sidecar gets (KUBEMOOT_PROVIDER_ENDPOINTS): the host:port of
// every ModelProvider the operator manages, plus the chart's extra entries. It travels with the
// Agent's binding env, so a default install is protected with no configuration. A pod keeps the
// list it was admitted with: a ModelProvider added later is allowed by pods created after it,
// or by an extra pattern (e.g. `*.gpu.svc.cluster.local:11434`) that covers it in advance.
import { endpointHostPort } from "../../net/index.js";
import { SETTINGS } from "../../settings/index.js";
import type { BindingLookup } from "./admission.js";

/** `host:port` of each endpoint (IPv6 in brackets), sorted, without duplicates. */
export function providerEndpointEntries(endpoints: readonly string[]): string[] {
  const out = new Set<string>();
  for (const e of endpoints) {
    const hp = endpointHostPort(e);
    if (hp) out.add(`${hp.host.includes(":") ? `[${hp.host}]` : hp.host}:${hp.port}`);
  }
  return [...out].sort();
}

/**
 * A lookup whose bindings also carry KUBEMOOT_PROVIDER_ENDPOINTS: `endpoints()` (the managed
 * providers', read per admission) and `extra` (already validated). Nothing is added when both
 * are empty: such a sidecar allows every endpoint and warns at start.
 */
export function withProviderEndpoints(
  lookup: BindingLookup,
  endpoints: () => readonly string[],
  extra: readonly string[] = [],
): BindingLookup {
  return (namespace, agent) => {
    const b = lookup(namespace, agent);
    if (!b) return b;
    const list = [...new Set([...providerEndpointEntries(endpoints()), ...extra])];
    if (list.length === 0) return b;
    return { ...b, env: { ...b.env, [SETTINGS.providerEndpoints.name]: list.join(",") } };
  };
}
