// What a placement decision says (docs/rules/placement.md §5): claim a ticket, queue for a busy
// copy, wait for memory, or refuse. A leaf of the core: the planner and every policy
// (./policies) produce these, the scheduler and the simulation read them.
import type { RefusalReason } from "./refusal.js";

/** The planner step that produced a claim. */
export type PlanStep = 1 | 2 | 3 | 4 | 5;

/** Claim a ticket on `provider` for `model` (the state layer makes it atomic). */
export interface ClaimDecision {
  kind: "claim";
  provider: string;
  endpoint: string;
  model: string;
  /** True when the model is neither resident nor loading there: this claim loads it. */
  cold: boolean;
  /**
   * True when another ticket is loading the model there right now: the call joins that
   * load (and waits for it). The ticket should record `coldLoad: cold || loading` — the
   * model was not resident at claim time — so the load's VRAM stays counted even if the
   * loader's ticket ends before the model shows as resident.
   */
  loading: boolean;
  /** Occupancy F of the model (MiB); 0 when unknown (warm copies only). */
  footprintMiB: number;
  /** Context (tokens) the call gets there; 0 = unknown. */
  contextLength: number;
  /** Victims to unload after the claim, with their footprints (MiB); empty unless step 5. */
  evicts: Record<string, number>;
  step: PlanStep;
  /** Steps 1–4: weighted cost (points). Step 5: the unload's expected delay (s). */
  cost: number;
  /**
   * Set when the claim relies on a free slot of the copy (the time policy): the state layer
   * refuses it if that many tickets already hold the model there.
   */
  slots?: number;
}

/** Wait for a busy copy: gpu-busy now, no ticket; retry on the next state change. */
export interface QueueDecision {
  kind: "queue";
  provider: string;
  model: string;
  /** Expected wait until a slot frees there (s). */
  estimatedWaitS: number;
  /** The time policy: expected seconds until the call finishes there (wait, service, less any cache saving). */
  expectedS?: number;
  /** The unload it was compared with (s), when there was one. */
  unloadCostS?: number;
  message: string;
}

/** No copy to queue at and no room to make: gpu-busy now, wait for the next state change. */
export interface WaitForMemoryDecision {
  kind: "wait-for-memory";
  model: string;
  message: string;
}

/** A refusal that waiting cannot change (or a call that never waits). */
export interface RefuseDecision {
  kind: "refuse";
  reason: RefusalReason;
  model: string;
  message: string;
  /** Largest known context (tokens) among providers that could hold an acceptable model; 0 unknown. */
  largestContext: number;
}

export type Decision = ClaimDecision | QueueDecision | WaitForMemoryDecision | RefuseDecision;
