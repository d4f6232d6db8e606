// Builders for the core's tests: complete wire shapes from a few fields.

import type { ProviderState, Residency, Ticket } from "../../src/core/shapes.js";
import type { PlacementSnapshot } from "../../src/core/snapshot.js";
import { providerState } from "./state-fixtures.js";

/** The tests' clock: 2026-06-11T00:00:00Z. */
export const T0 = Date.UTC(2026, 5, 11);

export const RTX_5090_MIB = 32605;
export const RTX_4090_MIB = 24563;

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * A ready provider probed at T0 with no VRAM or context of its own unless given; resident models
 * come from `loadedModelFootprintsMiB`.
 */
export function provider(name: string, over: Partial<ProviderState> = {}): ProviderState {
  return providerState(name, { lastProbedAt: iso(T0), totalVramMiB: 0, contextLength: 0, ...over });
}

let seq = 0;

/** A live ticket claimed at `claimedAtMs` (default T0) with a lease 150 s later. */
export function ticket(
  providerName: string,
  modelName: string,
  over: Partial<Ticket> & { claimedAtMs?: number } = {},
): Ticket {
  const { claimedAtMs, ...rest } = over;
  const at = claimedAtMs ?? T0;
  return {
    ticketId: `t${++seq}`,
    provider: providerName,
    modelFootprintMiB: 0,
    kvCacheFootprintMiB: 0,
    holderId: "holder",
    claimedAt: iso(at),
    modelName,
    evicts: {},
    expiresAt: at + 150_000,
    ...rest,
  };
}

export function residency(providerName: string, modelName: string, mib: number): Residency {
  return { provider: providerName, modelName, modelFootprintMiB: mib };
}

export function snapshot(over: Partial<PlacementSnapshot> = {}): PlacementSnapshot {
  return { providers: [], tickets: [], residencies: [], nowMs: T0, ...over };
}
