// What the scheduler asks of inference servers (unload a victim, pre-load a plan), over one
// Ollama client per endpoint. Never to an endpoint outside the allowlist (defence in depth: the
// state layer already keeps such providers out of the scheduler's view).
import { OllamaClient } from "../src/engines/index.js";
import { ErrorCode, KubemootError } from "../src/errors/index.js";
import { ALLOW_ALL_ENDPOINTS, type EndpointAllowlist } from "../src/net/index.js";
import type { ProviderOps } from "../src/scheduler/index.js";
import { SETTINGS } from "../src/settings/index.js";

/** ProviderOps over Ollama clients, one per endpoint. */
export function ollamaOps(
  allowlist: EndpointAllowlist = ALLOW_ALL_ENDPOINTS,
): ProviderOps & { close(): Promise<void> } {
  const clients = new Map<string, OllamaClient>();
  const client = (endpoint: string) => {
    if (!allowlist.allows(endpoint)) {
      throw new KubemootError(
        ErrorCode.ProviderFailure,
        `provider endpoint not in ${SETTINGS.providerEndpoints.name}: no request sent`,
        { field: "endpoint" },
      );
    }
    let c = clients.get(endpoint);
    if (!c) {
      c = new OllamaClient({ baseUrl: endpoint });
      clients.set(endpoint, c);
    }
    return c;
  };
  return {
    async unload(endpoint, model) {
      await client(endpoint).unload(model);
    },
    async load(endpoint, model) {
      await client(endpoint).load(model);
    },
    async close() {
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}
