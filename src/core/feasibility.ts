// The hard filters of one (provider, model) pair, with reasons (docs/rules/placement.md §3).
//
// VRAM: a warm copy (resident, or being loaded by a live ticket) is feasible whatever its
// VRAM or slots, unless a live ticket plans to unload it. A cold load needs a known total, a
// known occupancy F ≤ usable, and room beside what is already committed. "Committed" is
// counted the way the claim budget (docs/rules/state.md) counts it, so the planner never proposes a
// claim the state layer's atomic check would refuse:
//   F + resident + in-flight cold loads − credit(victims other tickets plan) ≤ usable
// i.e. in-flight loads take room exactly like residents (each model once: a model that is
// resident is never also counted as loading), and a victim another ticket will unload frees
// room only for that ticket's load, which is itself in flight.
//
// Context: the context of (provider, model) must hold the prompt (unknown holds).
import { holds } from "./context-fit.js";
import type { IneligibleReason } from "./eligibility.js";
import type { Occupancy } from "./occupancy.js";
import { contextAt, lists, type ProviderView } from "./snapshot.js";

export type InfeasibleReason =
  | IneligibleReason
  /** A live ticket plans to unload the model here: not warm, and loading it again makes no sense. */
  | "planned-unload"
  | "unknown-total"
  | "unknown-occupancy"
  /** F > usable: the card can never hold it. */
  | "exceeds-usable"
  /** The provider publishes its on-disk models and this one is not among them. */
  | "not-on-disk"
  /** F ≤ usable but other models (resident or loading) take the room. */
  | "no-room"
  | "context-too-small";

export type Feasibility =
  | { feasible: true; warm: boolean; loading: boolean; contextLength: number | undefined }
  | { feasible: false; reason: InfeasibleReason };

/** VRAM still committed on a provider for a cold claim: resident + loading − others' victims (MiB). */
export function committedMiB(v: ProviderView): number {
  return v.residentSum + v.loadingSum - v.credit;
}

/** Models counted against the engine's loaded-model limit: resident or loading, less planned victims. */
export function loadedCount(v: ProviderView): number {
  let n = v.resident.size + v.loading.size;
  for (const m of v.plannedVictims) if (v.resident.has(m)) n--;
  return n;
}

/** Whether a cold load of F MiB fits on the provider now (known total and F assumed). */
export function coldFits(v: ProviderView, footprintMiB: number): boolean {
  if (v.maxLoaded > 0 && loadedCount(v) >= v.maxLoaded) return false; // the engine would evict by itself
  return footprintMiB <= v.usable && footprintMiB + committedMiB(v) <= v.usable;
}

/** What a cold load of F MiB must free first: MiB, and how many models (the engine's limit). */
export function roomNeeded(v: ProviderView, footprintMiB: number): { mib: number; models: number } {
  return {
    mib: footprintMiB + committedMiB(v) - v.usable,
    models: v.maxLoaded > 0 ? loadedCount(v) + 1 - v.maxLoaded : 0,
  };
}

/** Warm on this provider: resident or loading, and not planned for unload by a live ticket. */
export function isWarm(v: ProviderView, model: string): boolean {
  if (v.loading.has(model)) return true;
  return v.resident.has(model) && !v.plannedVictims.has(model);
}

/** The VRAM filter's verdict without allocating: how the model would run here, or why not. */
export type VramVerdict = "warm" | "loading" | "cold" | Exclude<InfeasibleReason, "context-too-small">;

/** The VRAM filter alone (eligibility included), as a verdict. */
export function vramVerdict(v: ProviderView, model: string, occ: Occupancy): VramVerdict {
  if (v.ineligible !== undefined) return v.ineligible;
  if (v.loading.has(model)) return "loading";
  if (v.resident.has(model)) return v.plannedVictims.has(model) ? "planned-unload" : "warm";
  if (!lists(v, model)) return "not-on-disk";
  if (!v.totalKnown) return "unknown-total";
  if (!occ.known) return "unknown-occupancy";
  if (occ.mib > v.usable) return "exceeds-usable";
  if (!coldFits(v, occ.mib)) return "no-room";
  return "cold";
}

/** The VRAM filter alone (eligibility included). */
export function vramFeasibility(v: ProviderView, model: string, occ: Occupancy): Feasibility {
  const verdict = vramVerdict(v, model, occ);
  if (verdict !== "warm" && verdict !== "loading" && verdict !== "cold")
    return { feasible: false, reason: verdict };
  return {
    feasible: true,
    warm: verdict !== "cold",
    loading: verdict === "loading",
    contextLength: contextAt(v, model),
  };
}

/** Both hard filters, judged for the same provider and model. */
export function feasibility(
  v: ProviderView,
  model: string,
  occ: Occupancy,
  promptTokens: number | undefined,
): Feasibility {
  const f = vramFeasibility(v, model, occ);
  if (f.feasible && !holds(f.contextLength, promptTokens))
    return { feasible: false, reason: "context-too-small" };
  return f;
}
