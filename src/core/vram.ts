// VRAM accounting of one provider (docs/rules/placement.md §1, docs/rules/state.md "The claim protocol").
import { VRAM_RESERVE_FRACTION, VRAM_RESERVE_MIN_MIB } from "./constants.js";
import type { ProviderState, Residency, Ticket } from "./shapes.js";

/** Headroom kept free on a card: max(2048, floor(12% of total)). */
export function reserveMiB(totalMiB: number): number {
  return Math.max(VRAM_RESERVE_MIN_MIB, Math.floor(VRAM_RESERVE_FRACTION * totalMiB));
}

/** VRAM placements may use. An unknown total (0 or less) gives 0: "unknown", not "zero room". */
export function usableMiB(totalMiB: number): number {
  if (!(totalMiB > 0)) return 0;
  return Math.max(0, totalMiB - reserveMiB(totalMiB));
}

/** True while a ticket holds its room: its lease (when it has one) has not passed. */
export function ticketLive(ticket: Ticket, nowMs: number): boolean {
  return ticket.expiresAt === undefined || ticket.expiresAt > nowMs;
}

/** lastProbedAt has whole-second precision: a probe counts as after an overlay only past this. */
const OVERLAY_PROBE_SLACK_MS = 1000;

/**
 * Whether a residency overlay still counts: it does unless the provider was probed after it was
 * written and that probe does not list the model (then the model was unloaded since).
 */
export function overlayCurrent(state: ProviderState, r: Residency): boolean {
  if (r.writtenAt === undefined || !(r.writtenAt > 0)) return true;
  const probed = Date.parse(state.lastProbedAt ?? "");
  if (!Number.isFinite(probed) || probed < r.writtenAt + OVERLAY_PROBE_SLACK_MS) return true;
  return (
    (state.loadedModels ?? []).includes(r.modelName) || r.modelName in (state.loadedModelFootprintsMiB ?? {})
  );
}

/**
 * Resident models of a provider and their footprints: per model the larger of the published
 * /api/ps footprint and a sidecar's residency overlay.
 */
export function residentModels(state: ProviderState, residencies: readonly Residency[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [model, mib] of Object.entries(state.loadedModelFootprintsMiB ?? {})) {
    out.set(model, Math.max(out.get(model) ?? 0, nonNegative(mib)));
  }
  for (const model of state.loadedModels ?? []) if (!out.has(model)) out.set(model, 0);
  for (const r of residencies) {
    if (r.provider !== state.name || !overlayCurrent(state, r)) continue;
    out.set(r.modelName, Math.max(out.get(r.modelName) ?? 0, nonNegative(r.modelFootprintMiB)));
  }
  return out;
}

/** Sum of resident footprints, each model counted once. */
export function residentMiB(resident: ReadonlyMap<string, number>): number {
  let sum = 0;
  for (const mib of resident.values()) sum += mib;
  return sum;
}

/**
 * Whether a live ticket is an in-flight load: its model is not resident. That holds whatever
 * the ticket says of itself: a ticket claimed warm on a belief the newest state no longer
 * shares (the model was unloaded meanwhile) will make the engine load the model again, so it
 * takes room like a cold one. Once the model is resident its VRAM is counted as resident.
 */
export function isInFlightLoad(ticket: Ticket, resident: ReadonlyMap<string, number>): boolean {
  return !resident.has(ticket.modelName);
}

/** In-flight cold-load footprints, one per model (two tickets loading one model share it). */
export function inFlightLoads(
  tickets: readonly Ticket[],
  resident: ReadonlyMap<string, number>,
  nowMs: number,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of tickets) {
    if (!ticketLive(t, nowMs) || !isInFlightLoad(t, resident)) continue;
    out.set(t.modelName, Math.max(out.get(t.modelName) ?? 0, nonNegative(t.modelFootprintMiB)));
  }
  return out;
}

/**
 * Credit of planned victims: each distinct victim planned by any live ticket, counted once,
 * and only while the provider still reports it resident (after the unload it is no longer
 * resident, so it stops counting on both sides). A victim that a live ticket holds gives no
 * credit: the rules refuse a plan on a busy victim and a call on a planned one, so both only
 * meet after a race, and then one of them withdraws — possibly the plan.
 */
export function victimCreditMiB(
  tickets: readonly Ticket[],
  resident: ReadonlyMap<string, number>,
  nowMs: number,
): number {
  const busy = new Set<string>();
  for (const t of tickets) if (ticketLive(t, nowMs)) busy.add(t.modelName);
  const victims = new Set<string>();
  for (const t of tickets) {
    if (!ticketLive(t, nowMs)) continue;
    for (const v of Object.keys(t.evicts ?? {})) if (resident.has(v) && !busy.has(v)) victims.add(v);
  }
  let sum = 0;
  for (const v of victims) sum += resident.get(v) ?? 0;
  return sum;
}

export interface BudgetView {
  usable: number;
  resident: number;
  inFlight: number;
  credit: number;
  /** Room a new cold load (with no planned victims of its own) may take now. */
  free: number;
}

/** The provider's budget as a claim sees it (docs/rules/state.md "Budget for a claim"). */
export function budgetView(
  state: ProviderState,
  tickets: readonly Ticket[],
  residencies: readonly Residency[],
  nowMs: number,
): BudgetView {
  const res = residentModels(state, residencies);
  const usable = usableMiB(state.totalVramMiB);
  const resident = residentMiB(res);
  let inFlight = 0;
  for (const mib of inFlightLoads(tickets, res, nowMs).values()) inFlight += mib;
  const credit = victimCreditMiB(tickets, res, nowMs);
  return { usable, resident, inFlight, credit, free: Math.max(0, usable - resident - inFlight) };
}

/**
 * Whether a cold claim of `footprintMiB` fits: resident + in-flight + F ≤ usable + credit,
 * where credit also counts the victims this claim itself plans (once, while resident).
 * Warm claims take no new VRAM and always fit the budget.
 */
export function claimFits(
  state: ProviderState,
  tickets: readonly Ticket[],
  residencies: readonly Residency[],
  claim: Pick<Ticket, "modelName" | "modelFootprintMiB" | "evicts">,
  nowMs: number,
): boolean {
  const res = residentModels(state, residencies);
  if (res.has(claim.modelName)) return true;
  // Only this provider's tickets count (callers may pass a wider list).
  if (tickets.some((t) => t.provider !== state.name))
    tickets = tickets.filter((t) => t.provider === state.name);
  const loads = inFlightLoads(tickets, res, nowMs);
  const loading = loads.get(claim.modelName);
  // Converging on a load in flight takes no new room, unless the claim is larger; with an
  // unknown total there is nothing to judge it against.
  if (!(state.totalVramMiB > 0)) return loading !== undefined;
  loads.set(claim.modelName, Math.max(loading ?? 0, nonNegative(claim.modelFootprintMiB)));
  let inFlight = 0;
  for (const mib of loads.values()) inFlight += mib;
  const withClaim = [...tickets, { ...claim, expiresAt: undefined } as Ticket];
  const credit = victimCreditMiB(withClaim, res, nowMs);
  // A converging claim is judged too: it relies on the loads and plans in view, and one of
  // them may yet withdraw (docs/rules/state.md §5).
  return residentMiB(res) + inFlight <= usableMiB(state.totalVramMiB) + credit;
}

function nonNegative(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
}
