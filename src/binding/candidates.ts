// Candidate lists (docs/rules/binding.md "Bind"): every Ready Model the phase's require admits
// (provider readiness and VRAM not checked), one entry per model id with its best quality
// score; the bound model first, then score descending, then id.
import { admits } from "./filter.js";
import { cmp } from "./order.js";
import type { PhaseContext } from "./plugin.js";
import { qualityScore } from "./score.js";
import type { Candidate, Model } from "./types.js";

export function candidateList(ctx: PhaseContext, visible: readonly Model[], bound?: Model): Candidate[] {
  const best = new Map<string, number>();
  const req = ctx.rule.require;
  if (req.ok) {
    for (const model of visible) {
      if (!model.status.ready || !admits(req.selector, model.labels)) continue;
      const score = qualityScore(ctx, model);
      const id = model.spec.model;
      if (!best.has(id) || score > best.get(id)!) best.set(id, score);
    }
  }
  // A triage fallback binds a model this rule does not admit: it still leads the list.
  if (bound && !best.has(bound.spec.model)) best.set(bound.spec.model, qualityScore(ctx, bound));
  const first = bound?.spec.model;
  return [...best.entries()]
    .map(([model, score]) => ({ model, score }))
    .sort(
      (a, b) =>
        Number(b.model === first) - Number(a.model === first) || b.score - a.score || cmp(a.model, b.model),
    );
}
