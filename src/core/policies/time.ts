// The default policy ("time"): choose by expected seconds until the call finishes (docs/rules/placement.md
// §5). The same hard filters, claim protocol and refusal reasons as Kubemoot's weighted cost;
// what differs is the currency and two rules the cost's points cannot express:
// - a slot is a slot: a claim on a warm copy needs a free one. A call that would queue behind
//   others waits in the sidecar (a "queue" decision: gpu-busy now, placed when a slot frees),
//   never at the engine; calls that cannot wait never queue at all;
// - an unload pays for itself: its price counts the victims' own demand for a reload, and a
//   copy that others wait for is not unloaded before it has served a few load times' worth;
// - a prompt cache is worth the prefill it saves (§5.5): a copy that holds the conversation's
//   prefix finishes the call sooner by that much, and is waited for while that is sooner than
//   a free slot elsewhere ("sticky until saturated", in seconds).
import { MIN_RESIDENCY_LOADS, SECOND_COPY_LOADS, UNLOAD_S } from "../constants.js";
import { holds } from "../context-fit.js";
import type { ClaimDecision, Decision, PlanStep } from "../decision.js";
import { loadLeftS, loadS, queuedBehindS, serviceS, slotWaitS, unloadPriceS } from "../expected-time.js";
import { roomNeeded, vramVerdict } from "../feasibility.js";
import { cacheSavingS, displacementS } from "../prompt-cache.js";
import { gpuBusyMessage } from "../refusal.js";
import { contextAt, hasFreeSlot, lists, type ProviderView, type SnapshotIndex } from "../snapshot.js";
import { chooseVictims, idleResidents, type VictimCandidate } from "../victims.js";
import type { PlanOption, Policy, PolicyRequest } from "./policy.js";

interface Pick {
  view: ProviderView;
  model: string;
  /** Expected seconds until the call finishes, plus what it costs others (an unload's price). */
  seconds: number;
  kind: "warm" | "cold" | "unload" | "queue";
  footprintMiB: number;
  /** Seconds until a slot frees (queue picks). */
  waitS: number;
  victims: VictimCandidate[];
}

/** Kinds in the order a tie prefers them: no load before a load, a load before an unload. */
const KIND_ORDER: Record<Pick["kind"], number> = { warm: 0, queue: 1, cold: 2, unload: 3 };

/** Expected seconds this close count as equal: estimates are not finer than that. */
const TIE_S = 0.5;

/** Room a load would leave on its provider (MiB): the tighter fit keeps large rooms whole. */
function leftover(p: Pick): number {
  return p.view.usable - p.footprintMiB;
}

function better(top: Pick | undefined, p: Pick): boolean {
  if (top === undefined) return true;
  if (Math.abs(p.seconds - top.seconds) > TIE_S) return p.seconds < top.seconds;
  if (p.kind !== top.kind) return KIND_ORDER[p.kind] < KIND_ORDER[top.kind];
  if (p.kind !== "warm" && p.kind !== "queue" && leftover(p) !== leftover(top)) {
    return leftover(p) < leftover(top);
  }
  if (p.kind === "warm" && freeSlots(p) !== freeSlots(top)) return freeSlots(p) > freeSlots(top);
  if (p.seconds !== top.seconds) return p.seconds < top.seconds;
  return p.view.name < top.view.name;
}

/** Slots a warm copy has free: among equals, the emptier copy keeps the others' caches (§5.5). */
function freeSlots(p: Pick): number {
  return p.view.slots - (p.view.byModel.get(p.model)?.count ?? 0);
}

function footprint(ix: SnapshotIndex, model: string): number {
  const occ = ix.occupancy(model);
  return occ.known ? occ.mib : 0;
}

/** How long a resident copy's load took (s): as its overlay measured it, else the estimate. */
function copyLoadS(ix: SnapshotIndex, v: ProviderView, model: string, footprintMiB: number): number {
  const ms = v.residentLoadMs.get(model);
  return ms !== undefined && ms > 0 ? ms / 1000 : loadS(ix, v, footprintMiB);
}

/**
 * Whether a warm copy of `model` on `v` drains: it takes no new calls that may wait, so that it
 * turns idle and can be unloaded for a model that has no other way onto the fleet. A copy that
 * is never idle (its callers keep it busy) could otherwise never be a victim, and the other
 * model would wait for as long as they call. It drains once it has been resident
 * MIN_RESIDENCY_LOADS of its load times (never earlier: no thrash), for a model with waiters,
 * at least as many as its own, that has no warm copy, fits no provider cold, and would fit on
 * `v` without `model` and v's idle residents.
 */
function drains(ix: SnapshotIndex, v: ProviderView, model: string): boolean {
  const since = v.residentSince.get(model);
  if (since === undefined || ix.demand.size === 0) return false;
  const F = v.resident.get(model) ?? 0;
  if ((ix.nowMs - since) / 1000 < MIN_RESIDENCY_LOADS * copyLoadS(ix, v, model, F)) return false;
  const own = ix.demand.get(model)?.waiters ?? 0;
  for (const [other, d] of ix.demand) {
    if (other === model || d.waiters < Math.max(1, own) || !lists(v, other)) continue;
    if ((ix.warmAt.get(other) ?? []).some((w) => w.ineligible === undefined)) continue;
    const occ = ix.occupancy(other);
    if (!occ.known) continue;
    if (ix.providers.some((p) => p.ineligible === undefined && vramVerdict(p, other, occ) === "cold"))
      continue;
    let room = F;
    for (const c of idleResidents(v, other, ix.demand)) if (c.model !== model) room += c.footprintMiB;
    if (roomNeeded(v, occ.mib).mib <= room) return true;
  }
  return false;
}

/**
 * Seconds before a copy starts one more call: a copy still loading serves nobody before its
 * load ends, and its calls run after it; a loaded one waits for a slot. Zero with a free slot,
 * except on a single-slot model's copy, where the engine queues the calls it takes.
 */
function waitAtCopyS(ix: SnapshotIndex, v: ProviderView, model: string): number {
  return v.loading.has(model)
    ? loadLeftS(ix, v, model) + queuedBehindS(ix, v, model)
    : slotWaitS(ix, v, model);
}

/** Told every option a search weighs (explain), not only its best. */
type Sink = ((p: Pick) => void) | undefined;

/** The best eligible warm copy of `model` with a free slot: loads in flight count their rest. */
function freeSlot(ix: SnapshotIndex, model: string, r: PolicyRequest, sink?: Sink): Pick | undefined {
  const { prompt, mayQueue, cached } = r;
  let top: Pick | undefined;
  const F = footprint(ix, model);
  for (const v of ix.warmAt.get(model) ?? []) {
    if (v.ineligible !== undefined || !holds(contextAt(v, model), prompt)) continue;
    if (!hasFreeSlot(v, model)) continue;
    // A draining copy still serves calls that cannot wait: they never queue.
    if (mayQueue && drains(ix, v, model)) continue;
    const seconds =
      waitAtCopyS(ix, v, model) +
      serviceS(ix, v, model) -
      cacheSavingS(ix, v, model, cached) +
      displacementS(ix, v, model, r.conversation, cached);
    const p: Pick = { view: v, model, seconds, kind: "warm", footprintMiB: F, waitS: 0, victims: [] };
    sink?.(p);
    if (better(top, p)) top = p;
  }
  return top;
}

/**
 * Idle residents `v` may unload for `model`. A copy is kept until it has been resident
 * MIN_RESIDENCY_LOADS of its own load times when it is in demand: agents wait for it (no fewer
 * than wait for the requested model), or it was called since it loaded — a copy in use is idle
 * only between calls, and unloading it then for a model with equal demand would thrash.
 */
function victimsFor(ix: SnapshotIndex, v: ProviderView, model: string): VictimCandidate[] {
  const wanted = Math.max(1, ix.demand.get(model)?.waiters ?? 0);
  return idleResidents(v, model, ix.demand).filter((c) => {
    const since = v.residentSince.get(c.model);
    if (since === undefined) return true;
    const waitedFor = (c.demand?.waiters ?? 0) >= wanted;
    const usedSince = (c.demand?.lastUsedAtMs ?? 0) >= since;
    if (!waitedFor && !usedSince) return true;
    return (ix.nowMs - since) / 1000 >= MIN_RESIDENCY_LOADS * copyLoadS(ix, v, c.model, c.footprintMiB);
  });
}

/** Whether another model in demand (waited for, used, or planned) could use room on `v`. */
function contested(ix: SnapshotIndex, v: ProviderView, model: string): boolean {
  for (const [other, d] of ix.demand) {
    if (other === model || !lists(v, other)) continue;
    if (d.waiters > 0 || d.intents > 0 || d.recentUse > 0 || d.predicted > 0) return true;
  }
  return false;
}

/** Which of its options a call weighs: the unloads, and the copies it may queue at. */
interface Scope {
  unload: boolean;
  queueAt: "acceptable" | "preferred" | "none";
}

const ALL: Scope = { unload: true, queueAt: "acceptable" };

/** The preferred model's options that need no free slot: cold, unload, or a queue. */
function bestOption(ix: SnapshotIndex, r: PolicyRequest, scope: Scope = ALL, sink?: Sink): Pick | undefined {
  const preferred = r.acceptable[0]!.model;
  const occ = ix.occupancy(preferred);
  // A second copy holds its room long after this call: where other models in demand could use
  // that room, its load counts SECOND_COPY_LOADS times.
  const copies = (ix.warmAt.get(preferred) ?? []).some((v) => v.ineligible === undefined);
  const weight = ix.options.secondCopyLoads ?? SECOND_COPY_LOADS;
  let top: Pick | undefined;
  for (const v of ix.providers) {
    if (v.ineligible !== undefined || !holds(contextAt(v, preferred), r.prompt)) continue;
    const loadWeight = copies && contested(ix, v, preferred) ? weight : 1;
    const verdict = vramVerdict(v, preferred, occ);
    if (verdict === "cold" && occ.known) {
      const seconds = loadWeight * loadS(ix, v, occ.mib) + serviceS(ix, v, preferred);
      const p: Pick = {
        view: v,
        model: preferred,
        seconds,
        kind: "cold",
        footprintMiB: occ.mib,
        waitS: 0,
        victims: [],
      };
      sink?.(p);
      if (better(top, p)) top = p;
    } else if (scope.unload && verdict === "no-room" && occ.known && lists(v, preferred)) {
      const need = roomNeeded(v, occ.mib);
      const victims = chooseVictims(
        victimsFor(ix, v, preferred),
        need.mib,
        ix.options.maxVictimsConsidered,
        need.models,
      );
      if (victims === undefined || victims.length === 0) continue;
      const own = victims.length * UNLOAD_S + loadWeight * loadS(ix, v, occ.mib) + serviceS(ix, v, preferred);
      const seconds = own + unloadPriceS(ix, v, victims);
      const p: Pick = {
        view: v,
        model: preferred,
        seconds,
        kind: "unload",
        footprintMiB: occ.mib,
        waitS: 0,
        victims,
      };
      sink?.(p);
      if (better(top, p)) top = p;
    }
  }
  if (!r.mayQueue || scope.queueAt === "none") return top;
  for (const c of scope.queueAt === "preferred" ? r.acceptable.slice(0, 1) : r.acceptable) {
    const F = footprint(ix, c.model);
    for (const v of ix.warmAt.get(c.model) ?? []) {
      if (v.ineligible !== undefined || !holds(contextAt(v, c.model), r.prompt)) continue;
      const waitS = waitAtCopyS(ix, v, c.model);
      const p: Pick = {
        view: v,
        model: c.model,
        seconds:
          waitS +
          serviceS(ix, v, c.model) -
          cacheSavingS(ix, v, c.model, r.cached) +
          displacementS(ix, v, c.model, r.conversation, r.cached),
        kind: "queue",
        footprintMiB: F,
        waitS,
        victims: [],
      };
      sink?.(p);
      if (better(top, p)) top = p;
    }
  }
  return top;
}

function claimOf(p: Pick, step: PlanStep): ClaimDecision {
  const evicts: Record<string, number> = {};
  for (const x of p.victims) evicts[x.model] = x.footprintMiB;
  return {
    kind: "claim",
    provider: p.view.name,
    endpoint: p.view.state.endpoint ?? "",
    model: p.model,
    cold: p.kind === "cold" || p.kind === "unload",
    loading: p.view.loading.has(p.model),
    // A fixed-model engine's ticket holds a slot, no VRAM (docs/rules/engines.md "Placement").
    footprintMiB: p.view.fixed ? 0 : p.footprintMiB,
    contextLength: contextAt(p.view, p.model) ?? 0,
    evicts,
    step,
    cost: p.seconds,
    // Every claim of this policy relies on a free slot: two calls deciding at once to load the
    // same copy must not both get its one slot.
    slots: p.view.slots,
  };
}

/**
 * Plans one call by expected seconds. Returns undefined when nothing can be claimed or queued
 * at: the planner classifies the refusal (or waits for memory), as for the weighted cost.
 */
function planByTime(ix: SnapshotIndex, r: PolicyRequest): Decision | undefined {
  const [preferred, ...others] = r.acceptable;
  if (preferred === undefined) return undefined;
  // 1–2: a free slot on a warm copy, the preferred model first, then the others in order (on a
  // fixed engine, unless loading the preferred finishes sooner).
  const warm = freeSlot(ix, preferred.model, r);
  const stay = sticky(ix, r);
  if (warm !== undefined)
    return stay && stay.seconds < warm.seconds - TIE_S ? queueOf(stay, preferred.model) : claimOf(warm, 1);
  for (const c of others) {
    const alt = freeSlot(ix, c.model, r);
    if (alt === undefined) continue;
    if (stay && stay.seconds < alt.seconds - TIE_S) return queueOf(stay, preferred.model);
    // A fixed engine nearly always has a free slot, and its calls slow as its batch grows: the
    // preferred, loaded, may finish sooner. A free Ollama slot stays first: it loads nothing,
    // and loads beside it made copies that split their calls, idled out and reloaded.
    const own = alt.view.fixed ? bestOption(ix, r, STEP2) : undefined;
    if (own !== undefined && own.seconds < alt.seconds - TIE_S) return decisionOf(own, preferred.model);
    return claimOf(alt, 2);
  }
  // 4–5: the soonest finish among a cold load, an unload and a queue.
  const best = bestOption(ix, r);
  if (best === undefined) return undefined;
  return decisionOf(best, preferred.model);
}

/**
 * The busy copy that holds this call's prompt prefix, as a queue: waiting there is worth it while
 * the wait is shorter than the prefill it saves (docs/rules/placement.md §5.5). Undefined when no
 * cached copy is busy, or the call may not wait.
 */
function sticky(ix: SnapshotIndex, r: PolicyRequest): Pick | undefined {
  if (!r.mayQueue || r.cached.length === 0) return undefined;
  let top: Pick | undefined;
  for (const c of r.acceptable) {
    for (const v of ix.warmAt.get(c.model) ?? []) {
      if (v.ineligible !== undefined || !holds(contextAt(v, c.model), r.prompt)) continue;
      if (hasFreeSlot(v, c.model)) continue; // a free slot there is a warm pick already
      const saving = cacheSavingS(ix, v, c.model, r.cached);
      if (saving <= 0) continue;
      const waitS = waitAtCopyS(ix, v, c.model);
      const seconds = waitS + serviceS(ix, v, c.model) - saving;
      const p: Pick = {
        view: v,
        model: c.model,
        seconds,
        kind: "queue",
        footprintMiB: 0,
        waitS,
        victims: [],
      };
      if (better(top, p)) top = p;
    }
  }
  return top;
}

function queueOf(p: Pick, preferred: string): Decision {
  return {
    kind: "queue",
    provider: p.view.name,
    model: p.model,
    estimatedWaitS: p.waitS,
    expectedS: p.seconds,
    message: gpuBusyMessage(preferred),
  };
}

/**
 * What a fixed engine's free slot is weighed against: the preferred model's cold load onto free
 * room, which makes nobody else pay or wait (docs/rules/placement.md §5.1, step 2).
 */
const STEP2: Scope = { unload: false, queueAt: "none" };

function decisionOf(best: Pick, preferred: string): Decision {
  if (best.kind === "queue") return queueOf(best, preferred);
  return claimOf(best, best.kind === "unload" ? 5 : 4);
}

/**
 * The options a call weighs, best first by the same order the plan uses (at most `limit`, one per
 * provider and model): the expected-seconds comparison a decision record shows. Pure.
 */
function explainByTime(ix: SnapshotIndex, r: PolicyRequest, limit: number): PlanOption[] {
  const all = new Map<string, Pick>();
  const sink = (p: Pick) => {
    // One option per copy: a queue at a copy that has a free slot is the same place, worse.
    const key = `${p.view.name}\u0000${p.model}`;
    const had = all.get(key);
    if (had === undefined || better(had, p)) all.set(key, p);
  };
  for (const c of r.acceptable) freeSlot(ix, c.model, r, sink);
  if (r.acceptable.length > 0) bestOption(ix, r, ALL, sink);
  return [...all.values()]
    .sort((a, b) => (better(b, a) ? -1 : better(a, b) ? 1 : 0))
    .slice(0, Math.max(0, limit))
    .map((p) => ({ provider: p.view.name, model: p.model, kind: p.kind, seconds: p.seconds }));
}

export const timePolicy: Policy = { name: "time", plan: planByTime, explain: explainByTime };
