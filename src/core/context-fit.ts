// Context window filter (docs/rules/placement.md §3): a prompt longer than the context Ollama
// gives a model is cut silently, so placement refuses such providers. Unknown never refuses.
import type { ProviderState } from "./shapes.js";

/**
 * Context (tokens) of `model` on a provider: the loaded copy's /api/ps context_length, else
 * the provider's per-request context (OLLAMA_CONTEXT_LENGTH), else undefined (unknown).
 */
export function contextOf(state: ProviderState, model: string): number | undefined {
  const loaded = state.loadedModelContextLengths?.[model];
  if (typeof loaded === "number" && Number.isFinite(loaded) && loaded > 0) return loaded;
  const configured = state.contextLength;
  if (typeof configured === "number" && Number.isFinite(configured) && configured > 0) return configured;
  return undefined;
}

/** Whether a context holds a prompt: unknown context or prompt always holds; equality fits. */
export function holds(context: number | undefined, promptTokens: number | undefined): boolean {
  if (context === undefined || promptTokens === undefined || !(promptTokens > 0)) return true;
  return promptTokens <= context;
}

/** Whether some provider gives some of the models a context that holds the prompt. */
export function anyCanHold(
  providers: Iterable<ProviderState>,
  models: readonly string[],
  promptTokens: number,
): boolean {
  for (const p of providers) {
    for (const m of models) if (holds(contextOf(p, m), promptTokens)) return true;
  }
  return false;
}

/** The largest known context over providers and models; 0 when none is known. */
export function largestContext(providers: Iterable<ProviderState>, models: readonly string[]): number {
  let best = 0;
  for (const p of providers) {
    for (const m of models) best = Math.max(best, contextOf(p, m) ?? 0);
  }
  return best;
}
