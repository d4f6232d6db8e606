// The official Ollama client pointed at a sidecar's proxy, keeping the headers of its last
// answer (the proxy's X-Kubemoot-* attribution), and the check that a test's calls left no
// ticket behind in the shared state.
import { Ollama } from "ollama";
import type { StateStore } from "../../src/state/index.js";
import { waitUntil } from "./wait-until.js";

export function ollamaWithHeaders(host: string): { ollama: Ollama; headers: () => Headers } {
  let last = new Headers();
  const ollama = new Ollama({
    host,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      last = res.headers;
      return res;
    },
  });
  return { ollama, headers: () => last };
}

/** Waits until no live ticket is left in the shared state (5 s). */
export async function allTicketsReleased(store: StateStore): Promise<void> {
  await waitUntil(async () => (await store.tickets.allTickets()).size === 0, 5_000, "tickets released");
}
