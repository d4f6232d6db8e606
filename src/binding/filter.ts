// Filter plugins (docs/rules/binding.md "Filter"). A pair is feasible iff every plugin passes; the
// first failure names why. The reasons are short so that zero-match messages can count them
// the way kube-scheduler does ("2 insufficient VRAM, 1 provider not ready").
import { maxParallel, vramTotalMiB } from "./capacity.js";
import { type FilterPlugin, type FilterStatus, fail, OK, type Pair, type PhaseContext } from "./plugin.js";
import type { CompiledSelector } from "./selector.js";
import type { Labels } from "./types.js";

export const REQUIRE_SELECTOR = "RequireSelector";

/** The label of embedding models (docs/rules/binding.md "Filter"). */
export const EMBEDDING_LABEL = "capability/embedding";

/**
 * Whether a require selector admits a Model: its labels match, and an embedding model only when
 * the selector names the embedding capability (an agent's chat calls never go to one).
 */
export function admits(selector: CompiledSelector, labels: Labels): boolean {
  if (labels[EMBEDDING_LABEL] === "true" && !selector.keys.has(EMBEDDING_LABEL)) return false;
  return selector.matches(labels);
}

/** The Model's labels match the rule's require selector. */
export const requireSelector: FilterPlugin = {
  name: REQUIRE_SELECTOR,
  filter: (ctx, { model }) => {
    const req = ctx.rule.require;
    if (!req.ok) return fail(REQUIRE_SELECTOR, "invalid require selector");
    return admits(req.selector, model.labels) ? OK : fail(REQUIRE_SELECTOR, "Model does not match require");
  },
};

export const modelReady: FilterPlugin = {
  name: "ModelReady",
  filter: (_ctx, { model }) => (model.status.ready ? OK : fail("ModelReady", "Model not ready")),
};

/** spec.providerRef resolves (agent's namespace, then kubemoot, then cluster scope). */
export const providerResolves: FilterPlugin = {
  name: "ProviderResolves",
  filter: (_ctx, { provider }) => (provider ? OK : fail("ProviderResolves", "provider not found")),
};

export const providerReady: FilterPlugin = {
  name: "ProviderReady",
  filter: (_ctx, { provider }) => (provider?.status.ready ? OK : fail("ProviderReady", "provider not ready")),
};

/** vramMib + evictionOverhead ≤ vramTotalMiB; either side unknown fits; equality fits. */
export const vramHeadroom: FilterPlugin = {
  name: "VramHeadroom",
  filter: (ctx, { model, provider }) => {
    const need = model.spec.vramMib;
    const total = provider ? vramTotalMiB(provider) : undefined;
    if (need === undefined || total === undefined) return OK;
    return need + ctx.evictionOverheadMiB <= total ? OK : fail("VramHeadroom", "insufficient VRAM");
  },
};

/** agentCount + 1 ≤ maxParallel · concurrencyFactor; a factor of 0 or unknown slots: no check. */
export const parallelHeadroom: FilterPlugin = {
  name: "ParallelHeadroom",
  filter: (ctx, { provider }) => {
    const slots = provider ? maxParallel(provider) : undefined;
    if (ctx.concurrencyFactor === 0 || slots === undefined) return OK;
    const agents = provider?.status.capacity?.agentCount ?? 0;
    return agents + 1 <= slots * ctx.concurrencyFactor
      ? OK
      : fail("ParallelHeadroom", "no parallel headroom");
  },
};

/** In order: the first failure is the pair's reason. */
export const FILTER_PLUGINS: readonly FilterPlugin[] = [
  requireSelector,
  modelReady,
  providerResolves,
  providerReady,
  vramHeadroom,
  parallelHeadroom,
];

export function runFilters(
  ctx: PhaseContext,
  pair: Pair,
  plugins: readonly FilterPlugin[] = FILTER_PLUGINS,
): FilterStatus {
  for (const plugin of plugins) {
    const status = plugin.filter(ctx, pair);
    if (!status.ok) return status;
  }
  return OK;
}
