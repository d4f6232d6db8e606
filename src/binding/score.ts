// Score plugins (docs/rules/binding.md "Score"); a pair's score is the sum of their terms. The
// quality plugins (prefer, quality bias) compare models; the placement plugins (locality,
// provider weight, load, capacity) compare where they run. Candidate lists use only the
// former.
import { freeFraction, isLoaded, maxParallel, providerWeight } from "./capacity.js";
import type { FeasiblePair, PhaseContext, ScorePlugin } from "./plugin.js";
import { latencyTerm } from "./quality-bias.js";
import { roundHalfAwayFromZero } from "./round.js";
import type { Model } from "./types.js";

export const IMAGE_LOCALITY_BONUS = 10;
export const LOAD_PENALTY = 10;
export const CAPACITY_POINTS = 20;

/** The weight of every prefer term whose selector matches the Model's labels. */
export const prefer: ScorePlugin = {
  name: "Prefer",
  score: (ctx, { model }) => preferSum(ctx, model),
};

/** Only for rules without a prefer block, when the agent has an effective bias. */
export const qualityBias: ScorePlugin = {
  name: "QualityBias",
  score: (ctx, { model }) => qualityBiasTerm(ctx, model),
};

export const imageLocality: ScorePlugin = {
  name: "ImageLocality",
  score: (_ctx, { model, provider }) => (isLoaded(provider, model.spec.model) ? IMAGE_LOCALITY_BONUS : 0),
};

/** mulling +weight, triage −weight: a heavy card takes mulling and a light one triage. */
export const phaseProviderWeight: ScorePlugin = {
  name: "ProviderWeight",
  score: (ctx, { provider }) => {
    const w = providerWeight(provider);
    if (ctx.phase === "mulling") return w;
    if (ctx.phase === "triage") return w === 0 ? 0 : -w;
    return 0;
  },
};

/** −10 · (agents already bound here in this phase) / max(1, maxParallel), integer division. */
export const load: ScorePlugin = {
  name: "Load",
  score: (ctx, { provider }) => {
    if (ctx.agent.spec.discussRole === "coordinator") return 0;
    const bound = ctx.boundTo(provider);
    const penalty = Math.floor((LOAD_PENALTY * bound) / Math.max(1, maxParallel(provider) ?? 0));
    return penalty === 0 ? 0 : -penalty;
  },
};

/** spread: round(20 · freeFraction); binpack: round(20 · (1 − freeFraction)). */
export const capacity: ScorePlugin = {
  name: "Capacity",
  score: (ctx, { provider }) => {
    const free = freeFraction(provider);
    return roundHalfAwayFromZero(CAPACITY_POINTS * (ctx.strategy === "binpack" ? 1 - free : free));
  },
};

export const QUALITY_PLUGINS: readonly ScorePlugin[] = [prefer, qualityBias];
export const PLACEMENT_PLUGINS: readonly ScorePlugin[] = [imageLocality, phaseProviderWeight, load, capacity];
export const SCORE_PLUGINS: readonly ScorePlugin[] = [...QUALITY_PLUGINS, ...PLACEMENT_PLUGINS];

export function preferSum(ctx: PhaseContext, model: Model): number {
  let sum = 0;
  for (const term of ctx.rule.prefer) if (term.selector.matches(model.labels)) sum += term.weight;
  return sum;
}

export function qualityBiasTerm(ctx: PhaseContext, model: Model): number {
  if (ctx.rule.hasPrefer || ctx.bias === undefined) return 0;
  return latencyTerm(ctx.bias, model.labels);
}

/** A Model's quality score: prefer sum plus quality-bias term (no placement terms). */
export function qualityScore(ctx: PhaseContext, model: Model): number {
  return preferSum(ctx, model) + qualityBiasTerm(ctx, model);
}

export interface ScoredPair extends FeasiblePair {
  score: number;
  /** Each plugin's term, by plugin name. */
  terms: Record<string, number>;
}

export function scorePair(
  ctx: PhaseContext,
  pair: FeasiblePair,
  plugins: readonly ScorePlugin[] = SCORE_PLUGINS,
): ScoredPair {
  const terms: Record<string, number> = {};
  let score = 0;
  for (const plugin of plugins) {
    const term = plugin.score(ctx, pair);
    terms[plugin.name] = term;
    score += term;
  }
  return { ...pair, score, terms };
}
