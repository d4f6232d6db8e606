// Placement on a fixed-model engine (vLLM, llama.cpp's server, SGLang; docs/rules/engines.md
// "Placement"): it serves the models it was started with and batches calls continuously, so its
// price is contention, never a load. Pure: the decision's clock comes in as an argument.
import { parseIsoMs } from "./iso-time.js";
import type { ProviderState, Ticket } from "./shapes.js";

function count(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/**
 * Requests ahead of a new call on the engine: its running and waiting requests at the last probe
 * plus our tickets claimed since (the probe could not see them yet), and never fewer than our
 * live tickets. A probe time that cannot be read counts every ticket as new.
 */
export function fixedLoad(state: ProviderState, tickets: readonly Ticket[]): number {
  const probedMs = parseIsoMs(state.lastProbedAt ?? "");
  let since = 0;
  for (const t of tickets) {
    const at = parseIsoMs(t.claimedAt ?? "");
    if (Number.isNaN(probedMs) || Number.isNaN(at) || at > probedMs) since++;
  }
  return Math.max(tickets.length, count(state.activeCount) + count(state.queueDepth) + since);
}

/**
 * Requests the engine can run at once: its slots, fewer when the KV cache is the limit. With `r`
 * requests running in a fraction `u` of the cache, it holds about `r / u` of their size; at `u`
 * near 1 that is `r`, so a new call waits for one to finish. Unknown usage leaves the slots.
 */
export function fixedCapacity(slots: number, running: number, kvCacheUsage: number | undefined): number {
  const s = Math.max(1, Math.floor(slots));
  const r = count(running);
  const u = kvCacheUsage;
  if (u === undefined || !Number.isFinite(u) || u <= 0 || r === 0) return s;
  return Math.max(1, Math.min(s, Math.floor(r / Math.min(1, u))));
}

/**
 * Expected seconds before a new call starts on the engine: 0 while fewer than `capacity`
 * requests are ahead; otherwise it waits for `ahead − capacity + 1` of them to finish, and the
 * engine finishes `capacity` calls every `serviceS` seconds.
 */
export function fixedWaitS(ahead: number, capacity: number, serviceS: number): number {
  const c = Math.max(1, capacity);
  if (ahead < c) return 0;
  return ((ahead - c + 1) * Math.max(0, serviceS)) / c;
}
