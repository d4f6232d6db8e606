// What must fall out of the placement rules (docs/rules/placement.md §4 end), measured over a
// recorded simulation run (`simulate({..., record: true})`). Each check returns the figures or
// the violating records, so tests assert on them and a failure shows the offending decision.
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { DecisionRecord, SimResult, UnloadRecord } from "../../src/sim/index.js";

function need<T>(v: T[] | undefined, what: string): T[] {
  if (v === undefined)
    throw new KubemootError(ErrorCode.InvalidArgument, `the run kept no ${what}: simulate with record: true`);
  return v;
}

export interface WarmReuse {
  /** Decisions where an acceptable model had an eligible warm copy with a free slot. */
  opportunities: number;
  /** Of those, the decisions that claimed a warm copy. */
  taken: number;
  /** Completed calls that did not load their model. */
  warmCallFraction: number;
  missed: DecisionRecord[];
}

/** Warm reuse nearly always wins: a free warm slot is taken; few calls ever load. */
export function warmReuse(r: SimResult): WarmReuse {
  const ds = need(r.decisions, "decisions");
  const calls = need(r.calls, "calls").filter((c) => c.outcome === "done");
  const opp = ds.filter((d) => d.warmFreeSlot.length > 0);
  const missed = opp.filter((d) => !(d.kind === "claim" && d.cold === false));
  const warm = calls.filter((c) => !c.coldLoad).length;
  return {
    opportunities: opp.length,
    taken: opp.length - missed.length,
    warmCallFraction: calls.length === 0 ? 1 : warm / calls.length,
    missed,
  };
}

export interface LiveWork {
  /** Claims that planned to unload a model with live tickets on it. */
  plannedOnLive: DecisionRecord[];
  /** Unloads (any cause) of a model that had live tickets at that moment. */
  unloadedLive: UnloadRecord[];
}

/** Live work is never evicted. */
export function liveWorkEvictions(r: SimResult): LiveWork {
  const ds = need(r.decisions, "decisions");
  const us = need(r.unloads, "unloads");
  return {
    plannedOnLive: ds.filter((d) => Object.values(d.victimTickets).some((n) => n > 0)),
    unloadedLive: us.filter((u) => u.liveTickets > 0),
  };
}

export interface ColdLoads {
  cold: number;
  /** Cold claims without victims whose load did not fit the room left (committed + F > usable). */
  withoutRoom: DecisionRecord[];
  /** Claims the state layer's atomic budget check would refuse. */
  overBudget: DecisionRecord[];
  /** Models Ollama had to evict by itself (our budget should have left no need). */
  ollamaEvictions: UnloadRecord[];
}

/** Cold loads land on free room (or on room their planned victims free). */
export function coldLoadsOnFreeRoom(r: SimResult): ColdLoads {
  const ds = need(r.decisions, "decisions");
  const us = need(r.unloads, "unloads");
  const cold = ds.filter((d) => d.kind === "claim" && d.cold === true);
  return {
    cold: cold.length,
    withoutRoom: cold.filter(
      (d) =>
        Object.keys(d.evicts).length === 0 &&
        d.target !== undefined &&
        d.target.committed + d.target.footprint > d.target.usable,
    ),
    overBudget: ds.filter((d) => d.kind === "claim" && d.claimFits === false),
    ollamaEvictions: us.filter((u) => u.cause === "evicted"),
  };
}

export interface Home {
  model: string;
  provider: string;
  /** Fraction of the model's completed calls that ran on its home provider. */
  share: number;
  calls: number;
}

/** Each model's home (the provider that ran most of its completed calls) and its share. */
export function homes(r: SimResult): Home[] {
  const calls = need(r.calls, "calls").filter((c) => c.outcome === "done");
  const by = new Map<string, Map<string, number>>();
  for (const c of calls) {
    let m = by.get(c.model);
    if (m === undefined) {
      m = new Map();
      by.set(c.model, m);
    }
    m.set(c.provider, (m.get(c.provider) ?? 0) + 1);
  }
  const out: Home[] = [];
  for (const [model, per] of by) {
    let total = 0;
    let best = "";
    let bestN = -1;
    for (const [p, n] of [...per].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      total += n;
      if (n > bestN) {
        best = p;
        bestN = n;
      }
    }
    out.push({ model, provider: best, share: bestN / total, calls: total });
  }
  return out.sort((a, b) => (a.model < b.model ? -1 : 1));
}

export interface SecondCopy {
  decision: DecisionRecord;
  /** Live tickets per slot on the least-loaded existing copy elsewhere when the second was loaded. */
  queuePerSlot: number;
}

/** Cold loads of a model that was already warm on another provider, with that copy's queue. */
export function secondCopies(r: SimResult): SecondCopy[] {
  const ds = need(r.decisions, "decisions");
  const out: SecondCopy[] = [];
  for (const d of ds) {
    if (d.kind !== "claim" || d.cold !== true) continue;
    const elsewhere = d.copies.filter((c) => c.provider !== d.provider);
    if (elsewhere.length === 0) continue;
    out.push({ decision: d, queuePerSlot: Math.min(...elsewhere.map((c) => c.tickets / c.slots)) });
  }
  return out;
}
