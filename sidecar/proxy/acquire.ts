// Placement for one proxied call: one Place, and when the call policy says to wait, the
// scheduler's state-driven Wait, bounded by the proxy's wait limit and cut short when the
// client leaves. A placement that lands after the client left is released at once: nothing
// stays claimed.
import { afterRefusal } from "../../src/core/index.js";
import type { PlaceInput, PlacementOut, RefusalOut, Scheduler } from "../scheduler/scheduler.js";

export type Acquired =
  | { kind: "placed"; placement: PlacementOut; queueWaitMs: number }
  | { kind: "refused"; refusal: RefusalOut; waitedMs: number }
  /** The client went away while the call waited; nothing is claimed. */
  | { kind: "aborted"; waitedMs: number };

export async function acquire(
  scheduler: Scheduler,
  input: PlaceInput,
  signal: AbortSignal,
  waitLimitS: number,
): Promise<Acquired> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const first = await scheduler.place(input);
  if (first.kind === "placed") return settle(scheduler, first.placement, 0, signal);
  const next = afterRefusal(first.refusal, {
    phase: input.phase,
    cannotWait: input.cannotWait,
    hasStaticBinding: false, // Place already took the static fallback where there is one
    waitLimitS,
  });
  if (next !== "wait" || signal.aborted) {
    return signal.aborted
      ? { kind: "aborted", waitedMs: 0 }
      : { kind: "refused", refusal: first.refusal, waitedMs: 0 };
  }
  for await (const ev of scheduler.wait(input, signal, waitLimitS)) {
    if (ev.kind === "placed") return settle(scheduler, ev.placement, elapsed(), signal);
    if (ev.kind === "stand-aside") return { kind: "refused", refusal: ev.refusal, waitedMs: elapsed() };
  }
  return { kind: "aborted", waitedMs: elapsed() };
}

async function settle(
  scheduler: Scheduler,
  placement: PlacementOut,
  queueWaitMs: number,
  signal: AbortSignal,
): Promise<Acquired> {
  if (!signal.aborted) return { kind: "placed", placement, queueWaitMs };
  await scheduler
    .release({
      ticketId: placement.ticketId,
      // Never forwarded: nothing to learn about the provider.
      outcome: "unspecified",
      ran: false,
      latencyMs: 0,
      promptTokens: 0,
      promptChars: 0,
      outputTokens: 0,
      error: "client went away before the call was forwarded",
    })
    .catch(() => undefined);
  return { kind: "aborted", waitedMs: queueWaitMs };
}
