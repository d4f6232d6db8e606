// Kubemoot's weighted cost (docs/rules/placement.md §4, §5.2; KUBEMOOT_POLICY=kubemoot):
//   1. warm preferred with a free slot;
//   2. each other in-tolerance candidate, highest score first, warm with a free slot;
//   3. each in-tolerance candidate another ticket is loading right now (converge);
//   4. preferred by full weighted cost (queue at a warm copy, or cold load onto free room);
//   5. queue or unload, whichever is expected sooner; else nothing (the planner classifies).
import type { Candidate } from "../candidates.js";
import { holds } from "../context-fit.js";
import { costOf, DEFAULT_COST_WEIGHTS } from "../cost.js";
import type { ClaimDecision, Decision, PlanStep, QueueDecision } from "../decision.js";
import { serviceS } from "../expected-time.js";
import { roomNeeded, vramVerdict } from "../feasibility.js";
import { fixedWaitS } from "../fixed-engine.js";
import { cacheSavingS } from "../prompt-cache.js";
import { callTimeS, queueOrUnload, queueWaitS, unloadCostS } from "../queue-or-unload.js";
import { compareRanked, type Ranked } from "../ranking.js";
import { gpuBusyMessage } from "../refusal.js";
import {
  contextAt,
  hasFreeSlot,
  lists,
  oldestClaimedMs,
  type ProviderView,
  type SnapshotIndex,
  slotsOf,
} from "../snapshot.js";
import { successRateValue } from "../success-rate.js";
import { chooseVictims, idleResidents, type VictimCandidate } from "../victims.js";
import type { Policy, PolicyRequest } from "./policy.js";

interface Option extends Ranked {
  view: ProviderView;
  warm: boolean;
  footprintMiB: number;
  contextLength: number | undefined;
}

type Bias = ((provider: string, model: string) => number) | undefined;

/** Weighted cost (points) of `model` on `v`, plus any bias; F = 0 when unknown. */
function costAt(
  ix: SnapshotIndex,
  v: ProviderView,
  model: string,
  F: number,
  warm: boolean,
  bias: Bias,
): number {
  const extra = bias === undefined ? 0 : bias(v.name, model);
  // A fixed-model engine's contention is its requests ahead against what it runs at once, and
  // its VRAM is not ours to fit (docs/rules/engines.md "Placement").
  return (
    costOf(
      {
        active: v.fixed ? v.ahead : v.active,
        maxParallel: v.fixed ? v.capacity : v.slots,
        successRate: successRateValue(v.successByModel?.get(model)),
        publishedResidentMiB: v.publishedSum,
        usableMiB: v.usable,
        freeMiB: v.free,
        footprintMiB: v.fixed ? 0 : F,
        warm,
      },
      ix.options.weights,
    ) + (Number.isFinite(extra) ? extra : 0)
  );
}

/**
 * Keeps the better of `top` and (v, model) at `cost`. The option object is only built when
 * the cost can compete, so scanning many providers allocates little.
 */
function consider(
  top: Option | undefined,
  v: ProviderView,
  model: string,
  F: number,
  warm: boolean,
  cost: number,
): Option | undefined {
  if (top !== undefined && cost > top.cost) return top;
  const o: Option = {
    provider: v.name,
    model,
    cost,
    latencyEmaMs: v.latencyEmaMs,
    view: v,
    warm,
    footprintMiB: F,
    contextLength: contextAt(v, model),
  };
  return top === undefined || compareRanked(o, top) < 0 ? o : top;
}

function claim(o: Option, cold: boolean, step: PlanStep): ClaimDecision {
  return {
    kind: "claim",
    provider: o.provider,
    endpoint: o.view.state.endpoint ?? "",
    model: o.model,
    cold,
    // A fixed-model engine's ticket holds a slot, no VRAM (docs/rules/engines.md "Placement").
    footprintMiB: o.view.fixed ? 0 : o.footprintMiB,
    contextLength: o.contextLength ?? 0,
    loading: o.view.loading.has(o.model),
    evicts: {},
    step,
    cost: o.cost,
  };
}

/** Best eligible warm copy of `model` (optionally: with a free slot) whose context holds the prompt. */
function bestWarm(
  ix: SnapshotIndex,
  model: string,
  prompt: number,
  freeSlotOnly: boolean,
  bias: Bias,
  from: ReadonlyMap<string, readonly ProviderView[]> = ix.warmAt,
): Option | undefined {
  const views = from.get(model);
  if (views === undefined) return undefined;
  const occ = ix.occupancy(model);
  const F = occ.known ? occ.mib : 0;
  let top: Option | undefined;
  for (const v of views) {
    if (v.ineligible !== undefined) continue;
    if (freeSlotOnly && !hasFreeSlot(v, model)) continue;
    if (!holds(contextAt(v, model), prompt)) continue;
    top = consider(top, v, model, F, true, costAt(ix, v, model, F, true, bias));
  }
  return top;
}

/** Step 4: every eligible provider, warm or cold-feasible, context holding; lowest cost. */
function bestFull(
  ix: SnapshotIndex,
  model: string,
  prompt: number,
  bias: Bias,
  mayQueue: boolean,
): Option | undefined {
  const occ = ix.occupancy(model);
  const F = occ.known ? occ.mib : 0;
  let top: Option | undefined;
  for (const v of ix.providers) {
    if (v.ineligible !== undefined) continue;
    const verdict = vramVerdict(v, model, occ);
    if (verdict !== "warm" && verdict !== "loading" && verdict !== "cold") continue;
    if (!holds(contextAt(v, model), prompt)) continue;
    const warm = verdict !== "cold";
    if (warm && !mayQueue && !hasFreeSlot(v, model)) continue; // it would queue at the engine
    top = consider(top, v, model, F, warm, costAt(ix, v, model, F, warm, bias));
  }
  return top;
}

interface QueuePick {
  view: ProviderView;
  model: string;
  waitS: number;
}

/** Step 5, queue side: the copy of an acceptable model that frees soonest. */
function bestQueue(
  ix: SnapshotIndex,
  acceptable: readonly Candidate[],
  prompt: number,
): QueuePick | undefined {
  let top: QueuePick | undefined;
  for (const c of acceptable) {
    for (const v of ix.warmAt.get(c.model) ?? []) {
      if (v.ineligible !== undefined || !holds(contextAt(v, c.model), prompt)) continue;
      const mt = v.byModel.get(c.model);
      const callS = callTimeS(v.latencyEmaMs, ix.options.defaultCallTimeS);
      const waitS = v.fixed
        ? fixedWaitS(v.ahead, v.capacity, callS)
        : queueWaitS({
            tickets: mt?.count ?? 0,
            slots: slotsOf(v, c.model),
            oldestElapsedS: mt === undefined ? 0 : (ix.nowMs - oldestClaimedMs(mt, ix.nowMs)) / 1000,
            callTimeS: callS,
          });
      // Ties keep the earlier candidate (acceptable order), then the lower provider name.
      if (
        top === undefined ||
        waitS < top.waitS ||
        (waitS === top.waitS && top.model === c.model && v.name < top.view.name)
      ) {
        top = { view: v, model: c.model, waitS };
      }
    }
  }
  return top;
}

interface UnloadPick {
  view: ProviderView;
  footprintMiB: number;
  victims: VictimCandidate[];
  costS: number;
}

/** Step 5, unload side: the provider where making room for the preferred costs least. */
function bestUnload(ix: SnapshotIndex, model: string, prompt: number): UnloadPick | undefined {
  const occ = ix.occupancy(model);
  if (!occ.known) return undefined; // unknown occupancy never places a cold load
  const F = occ.mib;
  let top: UnloadPick | undefined;
  for (const v of ix.providers) {
    if (v.ineligible !== undefined || !v.totalKnown || F > v.usable || !lists(v, model)) continue;
    if (v.resident.has(model) || v.loading.has(model)) continue; // warm, or being unloaded
    if (!holds(contextAt(v, model), prompt)) continue;
    const need = roomNeeded(v, F);
    const victims = chooseVictims(
      idleResidents(v, model, ix.demand),
      need.mib,
      ix.options.maxVictimsConsidered,
      need.models,
    );
    if (victims === undefined || victims.length === 0) continue;
    const costS = unloadCostS(F, victims);
    if (top === undefined || costS < top.costS || (costS === top.costS && v.name < top.view.name)) {
      top = { view: v, footprintMiB: F, victims, costS };
    }
  }
  return top;
}

/**
 * The request's bias with the prompt-cache term (§5.5): a copy holding the prompt's prefix
 * costs prefixCache points less, times the share of a call there that its cache saves.
 */
function withCache(ix: SnapshotIndex, r: PolicyRequest): Bias {
  if (r.cached.length === 0) return r.bias;
  const weight = ix.options.weights.prefixCache ?? DEFAULT_COST_WEIGHTS.prefixCache;
  const bonus = new Map<string, number>();
  for (const p of r.cached) {
    const v = ix.providers.find((x) => x.name === p.provider);
    if (!v) continue;
    const share = cacheSavingS(ix, v, p.model, r.cached) / Math.max(serviceS(ix, v, p.model), 1e-9);
    bonus.set(`${p.provider}\0${p.model}`, weight * Math.min(1, share));
  }
  const base = r.bias;
  return (provider, model) => (base?.(provider, model) ?? 0) - (bonus.get(`${provider}\0${model}`) ?? 0);
}

/** Steps 1–5 by weighted cost; undefined when nothing can be claimed or queued at. */
function planByCost(ix: SnapshotIndex, r: PolicyRequest): Decision | undefined {
  const { acceptable, prompt, mayQueue } = r;
  const bias = withCache(ix, r);
  const preferred = acceptable[0]!;
  const s1 = bestWarm(ix, preferred.model, prompt, true, bias);
  if (s1 !== undefined) return claim(s1, false, 1);

  for (const c of acceptable.slice(1)) {
    const s2 = bestWarm(ix, c.model, prompt, true, bias);
    if (s2 !== undefined) return claim(s2, false, 2);
  }

  for (const c of acceptable) {
    const s3 = bestWarm(ix, c.model, prompt, !mayQueue, bias, ix.loadingAt);
    if (s3 !== undefined) return claim(s3, false, 3);
  }

  const s4 = bestFull(ix, preferred.model, prompt, bias, mayQueue);
  if (s4 !== undefined) return claim(s4, !s4.warm, 4);

  const q = bestQueue(ix, acceptable, prompt);
  const u = bestUnload(ix, preferred.model, prompt);
  const choice = queueOrUnload(q?.waitS, u?.costS);
  if (choice === "unload" && u !== undefined) {
    const evicts: Record<string, number> = {};
    for (const v of u.victims) evicts[v.model] = v.footprintMiB;
    return {
      kind: "claim",
      provider: u.view.name,
      endpoint: u.view.state.endpoint ?? "",
      model: preferred.model,
      cold: true,
      loading: false,
      footprintMiB: u.footprintMiB,
      contextLength: contextAt(u.view, preferred.model) ?? 0,
      evicts,
      step: 5,
      cost: u.costS,
    };
  }
  if (choice === "queue" && q !== undefined) {
    if (!mayQueue) {
      return {
        kind: "refuse",
        reason: "gpu-busy",
        model: preferred.model,
        message: gpuBusyMessage(preferred.model),
        largestContext: 0,
      };
    }
    const out: QueueDecision = {
      kind: "queue",
      provider: q.view.name,
      model: q.model,
      estimatedWaitS: q.waitS,
      message: gpuBusyMessage(preferred.model),
    };
    if (u !== undefined) out.unloadCostS = u.costS;
    return out;
  }

  return undefined;
}

export const weightedPolicy: Policy = { name: "kubemoot", plan: planByCost };
