// Which of an Ollama provider's models run with one slot (docs/rules/ollama.md: embedding
// models ignore OLLAMA_NUM_PARALLEL). Learned from /api/show once per model and digest, so a
// probe asks only about models it has not seen yet, a few at a time.
import { performance } from "node:perf_hooks";
import type { OllamaPsModel, OllamaShowResponse, OllamaTagModel } from "../engines/index.js";
import { modelName, singleSlot } from "./provider-state.js";

/** /api/show requests one probe keeps in flight at once. */
const SHOW_CONCURRENCY = 4;

export interface ShowClient {
  show(model: string): Promise<Pick<OllamaShowResponse, "capabilities">>;
}

type Listed = Partial<Pick<OllamaTagModel | OllamaPsModel, "name" | "model" | "digest">>;

export class SingleSlotModels {
  /** By model name: the digest it was learned for and the verdict. */
  private readonly known = new Map<string, { digest: string; single: boolean }>();

  /**
   * The single-slot models among those listed, asking /api/show about the ones not known yet
   * (or whose digest changed). A failed /api/show leaves its model out, and it is asked again
   * on the next probe: not knowing keeps the provider's slots, as before. No new question is
   * started once `budgetMs` has passed (a slow server must not hold the probe up for every
   * model on its disk); the rest wait for the next probe.
   */
  async refresh(
    client: ShowClient,
    listed: readonly Listed[],
    budgetMs = Number.POSITIVE_INFINITY,
  ): Promise<string[]> {
    const until = performance.now() + budgetMs;
    const digests = new Map<string, string>();
    for (const m of listed) {
      const name = m && typeof m === "object" ? modelName(m) : undefined;
      if (name !== undefined && !digests.has(name)) {
        digests.set(name, typeof m.digest === "string" ? m.digest : "");
      }
    }
    for (const name of this.known.keys()) if (!digests.has(name)) this.known.delete(name);
    const ask = [...digests].filter(([name, digest]) => this.known.get(name)?.digest !== digest);
    let next = 0;
    const worker = async () => {
      while (next < ask.length && performance.now() < until) {
        const [name, digest] = ask[next++]!;
        try {
          const shown = await client.show(name);
          this.known.set(name, { digest, single: singleSlot(shown.capabilities) });
        } catch {
          // Unknown this time; asked again next probe.
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SHOW_CONCURRENCY, ask.length) }, worker));
    const out: string[] = [];
    for (const name of digests.keys()) if (this.known.get(name)?.single === true) out.push(name);
    return out;
  }
}
