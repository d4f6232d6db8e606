// The sidecar's side of the endpoint allowlist (KUBEMOOT_PROVIDER_ENDPOINTS): provider states
// naming an endpoint outside the list are kept out of the scheduler's view, counted once per
// revision of the entry, and logged once per provider (again only if its endpoint changes).
import type { Logger } from "pino";
import { ALLOW_ALL_ENDPOINTS, type EndpointAllowlist } from "../src/net/index.js";
import { SETTINGS } from "../src/settings/index.js";
import type { ProviderStateFilter } from "../src/state/index.js";

const MAX_TRACKED_KEYS = 4096;

export interface EndpointGuard {
  readonly allowlist: EndpointAllowlist;
  /** The state store's filter; undefined when every endpoint is allowed. */
  readonly filter: ProviderStateFilter | undefined;
}

export function endpointGuard(
  allowlist: EndpointAllowlist | undefined,
  logger: Logger,
  onRejected: (reason: "endpoint") => void,
): EndpointGuard {
  const list = allowlist ?? ALLOW_ALL_ENDPOINTS;
  if (list.patterns.length === 0) {
    logger.warn(
      {},
      `${SETTINGS.providerEndpoints.name} is empty: every endpoint a provider state names is trusted (any NATS writer can redirect calls)`,
    );
    return { allowlist: list, filter: undefined };
  }
  logger.info({ providerEndpoints: list.patterns }, "provider endpoint allowlist");
  // Keyed by bucket key.
  const counted = new Map<string, number>();
  const logged = new Map<string, string>();
  const filter: ProviderStateFilter = (s, at) => {
    if (list.allows(s.endpoint)) {
      logged.delete(at.key);
      return true;
    }
    // Keys come from any writer: a flood of new ones must not grow this without bound
    // (forgetting only risks counting or logging an entry again).
    if (counted.size >= MAX_TRACKED_KEYS) {
      counted.clear();
      logged.clear();
    }
    // A resync delivers the same revision again: count it once.
    if ((counted.get(at.key) ?? 0) < at.revision) {
      counted.set(at.key, at.revision);
      onRejected("endpoint");
    }
    if (logged.get(at.key) !== s.endpoint) {
      logged.set(at.key, s.endpoint);
      logger.warn(
        { provider: at.key, endpoint: redact(s.endpoint), revision: at.revision },
        `provider state rejected: endpoint not in ${SETTINGS.providerEndpoints.name}`,
      );
    }
    return false;
  };
  return { allowlist: list, filter };
}

/** The endpoint without credentials, at most 200 characters (it comes from any NATS writer). */
function redact(endpoint: string): string {
  let out = endpoint;
  try {
    const u = new URL(endpoint);
    if (u.username || u.password) {
      u.username = "";
      u.password = "";
      out = u.toString();
    }
  } catch {
    // not a URL: logged as it is (bounded, and JSON-escaped by pino)
  }
  return out.length > 200 ? `${out.slice(0, 200)}…` : out;
}
