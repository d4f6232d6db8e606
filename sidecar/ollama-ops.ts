// What the scheduler asks of inference servers (unload a victim, pre-load a plan), over one
// Ollama client per endpoint.
import { OllamaClient } from "../src/engines/index.js";
import type { ProviderOps } from "./scheduler/scheduler.js";

/** ProviderOps over Ollama clients, one per endpoint. */
export function ollamaOps(): ProviderOps & { close(): Promise<void> } {
  const clients = new Map<string, OllamaClient>();
  const client = (endpoint: string) => {
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
