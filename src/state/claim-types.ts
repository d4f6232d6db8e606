// The claim engine's public shapes: what a claim asks for, what it gets back, and the options
// the engine runs with (docs/rules/state.md §6).
import type { BudgetView, Ticket } from "../core/index.js";
import type { Logger } from "../log/index.js";
import type { KvBucket } from "./kv.js";
import type { ProviderStateReader } from "./provider-state.js";
import type { KeyLayout } from "./ticket-keys.js";
import type { TicketsCopies } from "./tickets-copies.js";

export interface ClaimRequest {
  provider: string;
  model: string;
  /** VRAM the model takes (MiB). A warm claim records it and takes no new room. */
  modelFootprintMiB: number;
  /** KV-cache part of the footprint (MiB), recorded for Kubemoot's readers. */
  kvCacheFootprintMiB?: number;
  /** Victims this claim plans to unload, model → MiB. */
  evicts?: Record<string, number>;
  /** Lease of the ticket (ms); default the store's lease. */
  leaseMs?: number;
  /**
   * For a warm claim: the copy's parallel slots. When set, the claim is refused ("no-slot")
   * while as many live tickets hold the model there, this process's own not yet echoed by the
   * watch included, so that concurrent calls from one sidecar never oversubscribe a copy.
   */
  slots?: number;
}

export type ClaimRefusalReason =
  /** The budget has no room for the model (even with the planned victims' credit). */
  | "no-room"
  /** A planned victim has a live ticket: it picked up work. */
  | "victim-busy"
  /** No current (non-stale) state for the provider. */
  | "provider-unknown"
  /** Every attempt lost its compare-and-set (bounded attempts ran out). */
  | "contention"
  /** A warm claim found every slot of the copy taken. */
  | "no-slot";

export interface ClaimStats {
  /** Decisions made for this claim (one per attempt). */
  attempts: number;
  /** Attempts lost to another decision's compare-and-set. */
  conflicts: number;
  /** Tickets-bucket revision the deciding read was at. */
  revision: number;
  /** Age of the state the decision read (ms since the copies were last proven current). */
  viewAgeMs: number;
  /** Monotonic time (performance.now) at which that state was proven current. */
  confirmedAt: number;
}

export type ClaimResult =
  | { ok: true; ticket: Ticket; key: string; coldLoad: boolean; stats: ClaimStats }
  | {
      ok: false;
      reason: ClaimRefusalReason;
      stats: ClaimStats;
      /** The provider's budget as the refusing decision saw it (absent for provider-unknown). */
      budget?: BudgetView;
      /** The tickets that decision counted (written and pending), for diagnosis. */
      counted?: Ticket[];
      victim?: string;
    };

export interface ClaimEngineOptions {
  tickets: KvBucket;
  /** The tickets bucket's key layout (docs/rules/state.md §2.4). */
  keys: KeyLayout;
  /** The copies of the tickets bucket, one per provider or one for all (tickets-copies.ts). */
  copies: TicketsCopies;
  providers: ProviderStateReader;
  holderId: string;
  now: () => number;
  leaseMs: number;
  leaseGraceMs: number;
  maxAttempts: number;
  /** Maximum age of the state a decision reads (ms). */
  freshnessMs: number;
  /** Claims decided together in one compare-and-set (same provider, same process); default 16. */
  maxBatch?: number;
  /** Upper bound of the first retry jitter (ms); default 4. */
  jitterMs?: number;
  /** How long to wait for the last decision's tickets to arrive before writing them ourselves (ms); default 20. */
  helpWaitMs?: number;
  /** After a lost CAS, how long to wait for the winning guard to reach the copy before reading it directly (ms); default 100. */
  refreshWaitMs?: number;
  logger: Logger;
  /** Counts every lost compare-and-set (metrics). */
  onConflict?: () => void;
  /** Called when a claim withdraws its written or decided ticket on confirming it (claim-confirm.ts). */
  onWithdraw?: () => void;
  /**
   * This process's ticket releases still in flight, if any: a claim decided on the guard waits
   * for them, so that room (or a victim) its own process just gave back is seen.
   */
  settleReleases?: () => Promise<void> | undefined;
}
