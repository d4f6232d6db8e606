// Seeded synthetic fleet snapshots and placement requests for the decide benchmark.
import type {
  Candidate,
  ModelDemand,
  PlacementSnapshot,
  PlanRequest,
  ProviderHealth,
  ProviderState,
  Ticket,
} from "../../src/core/index.js";
import { usableMiB } from "../../src/core/index.js";
import type { Random } from "../../src/prng/index.js";

/** The snapshot's clock (epoch ms). */
export const NOW = Date.UTC(2026, 5, 11);
const PARAMS_B = [0.5, 1.5, 3, 7, 8, 14, 27, 32, 70];
const TOTALS = [16384, 24563, 32605, 49140, 81920];

export interface Model {
  name: string;
  footprintMiB: number;
}

function pick<T>(rng: Random, xs: readonly T[]): T {
  return xs[Math.floor(rng() * xs.length)]!;
}

export function makeModels(rng: Random, n: number): Model[] {
  return Array.from({ length: n }, (_, i) => {
    const b = pick(rng, PARAMS_B);
    return { name: `m${i}:${b}b`, footprintMiB: Math.round(b * 780 + 900 + rng() * 400) };
  });
}

/** A fleet mid-day: most cards hold one to three models, some calls in flight, some loads. */
export function makeSnapshot(rng: Random, providers: number, models: Model[]): PlacementSnapshot {
  const states: ProviderState[] = [];
  const tickets: Ticket[] = [];
  const health = new Map<string, ProviderHealth>();
  let seq = 0;
  for (let p = 0; p < providers; p++) {
    const name = `gpu-${String(p).padStart(4, "0")}`;
    const total = pick(rng, TOTALS);
    const usable = usableMiB(total);
    const loaded: Record<string, number> = {};
    const ctx: Record<string, number> = {};
    let used = 0;
    const want = 1 + Math.floor(rng() * 3);
    for (let k = 0; k < want * 3 && Object.keys(loaded).length < want; k++) {
      const m = pick(rng, models);
      if (m.name in loaded || used + m.footprintMiB > usable) continue;
      loaded[m.name] = m.footprintMiB;
      ctx[m.name] = pick(rng, [8192, 32768, 40960]);
      used += m.footprintMiB;
    }
    // /api/tags lists what the card has on disk: a bounded sample of the catalogue.
    const onDisk: Record<string, number> = {};
    for (let k = 0; k < Math.min(models.length, 24); k++) {
      const m = pick(rng, models);
      if (!(m.name in loaded)) onDisk[m.name] = Math.round(m.footprintMiB / 1.2);
    }
    const maxParallel = 1 + Math.floor(rng() * 4);
    states.push({
      name,
      endpoint: `http://${name}:11434`,
      maxParallel,
      activeCount: 0,
      queueDepth: 0,
      loadedModels: Object.keys(loaded),
      ready: rng() > 0.03,
      lastProbedAt: new Date(NOW - Math.floor(rng() * 20_000)).toISOString(),
      totalVramMiB: total,
      loadedModelFootprintsMiB: loaded,
      availableModelFootprintsMiB: onDisk,
      contextLength: pick(rng, [0, 8192, 32768]),
      loadedModelContextLengths: ctx,
    });
    for (const [model, mib] of Object.entries(loaded)) {
      const calls = Math.floor(rng() * (maxParallel + 2));
      for (let c = 0; c < calls; c++) tickets.push(mkTicket(name, model, mib, false, rng, ++seq));
    }
    if (rng() < 0.1) {
      const m = pick(rng, models);
      if (!(m.name in loaded) && used + m.footprintMiB <= usable) {
        tickets.push(mkTicket(name, m.name, m.footprintMiB, true, rng, ++seq));
      }
    }
    if (rng() < 0.5) health.set(name, { latencyEmaMs: 2000 + rng() * 30_000 });
  }
  const demand = new Map<string, ModelDemand>();
  for (const m of models) {
    if (rng() < 0.3) {
      demand.set(m.name, {
        waiters: Math.floor(rng() * 2),
        intents: Math.floor(rng() * 3),
        recentUse: rng() * 4,
        predicted: rng() * 2,
        lastUsedAtMs: NOW - Math.floor(rng() * 3_600_000),
        serviceMs: 0,
        topBand: 3,
      });
    }
  }
  return { providers: states, tickets, residencies: [], demand, health, nowMs: NOW };
}

function mkTicket(
  provider: string,
  model: string,
  mib: number,
  cold: boolean,
  rng: Random,
  seq: number,
): Ticket {
  const claimed = NOW - Math.floor(rng() * 60_000);
  return {
    ticketId: `t${seq}`,
    provider,
    modelFootprintMiB: mib,
    kvCacheFootprintMiB: 0,
    holderId: "bench",
    claimedAt: new Date(claimed).toISOString(),
    modelName: model,
    evicts: {},
    expiresAt: claimed + 150_000,
    coldLoad: cold,
  };
}

export function makeRequests(rng: Random, models: Model[], n: number): PlanRequest[] {
  return Array.from({ length: n }, () => {
    const chosen = new Set<string>();
    const want = Math.min(3, models.length);
    while (chosen.size < want) chosen.add(pick(rng, models).name);
    const scores = [80, 74, 60];
    const candidates: Candidate[] = [...chosen].map((model, i) => ({ model, score: scores[i]! }));
    return {
      candidates,
      tolerance: 10,
      promptTokens: 500 + Math.floor(rng() * 30_000),
      phase: rng() < 0.1 ? ("triage" as const) : ("mulling" as const),
    };
  });
}
