// The demand panel's data (docs/web-view.md "Demand"): per model what core's demand aggregate
// says (waiters, intents, decayed use, the selection forecast), and per crew the calls waiting
// by band, from the fair-share wait entries (or, with fair share off, from the waiters' agents'
// namespaces). Pure.
import { aggregateDemand, type DemandEntry } from "../core/index.js";
import type { DemandView } from "./view-types.js";

/** `refusals` is the trend window's count by reason (./trends.ts). */
export function demandView(
  entries: readonly DemandEntry[],
  nowMs: number,
  refusals: ReadonlyMap<string, number>,
): DemandView {
  const models: DemandView["models"] = [];
  for (const [model, d] of aggregateDemand(entries, nowMs)) {
    if (d.waiters === 0 && d.intents === 0 && d.recentUse < 0.01 && d.predicted < 0.01) continue;
    models.push({
      model,
      waiting: d.waiters,
      intents: d.intents,
      recentUse: round2(d.recentUse),
      forecast: round2(d.predicted),
    });
  }
  models.sort((a, b) => b.waiting - a.waiting || b.recentUse - a.recentUse || (a.model < b.model ? -1 : 1));
  const crews = new Map<string, Record<string, number>>();
  const count = (crew: string, band: string) => {
    const bands = crews.get(crew) ?? {};
    bands[band] = (bands[band] ?? 0) + 1;
    crews.set(crew, bands);
  };
  const queued = entries.filter((e) => e.kind === "queue" && e.expiresAt > nowMs);
  for (const e of queued) if (e.kind === "queue") count(e.crew, e.band);
  if (queued.length === 0) {
    for (const e of entries) {
      if (e.kind !== "wait" || e.expiresAt <= nowMs) continue;
      const slash = e.agent.indexOf("/");
      count(slash > 0 ? e.agent.slice(0, slash) : "_", "standard");
    }
  }
  return {
    models,
    crews: [...crews]
      .map(([crew, bands]) => ({ crew, waiting: Object.values(bands).reduce((a, b) => a + b, 0), bands }))
      .sort((a, b) => b.waiting - a.waiting || (a.crew < b.crew ? -1 : 1)),
    refusals: [...refusals]
      .map(([reason, n]) => ({ reason, count: Math.round(n) }))
      .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1)),
  };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
