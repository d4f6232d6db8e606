// The one call loop (docs/rules/placement.md §6): place; when the call policy says the refusal
// is worth waiting for, wait for the shared state to change and place again, until placed, told
// to stand aside, past the wait limit, or cancelled. The Wait RPC streams its events, the proxy
// and the simulation consume them through `acquire`; nothing else loops over placements.
import { afterRefusal } from "../core/index.js";
import { printable } from "../errors/index.js";
import { type FairShare, type FairTurn, WAITER_RENEW_MS } from "./fair-share.js";
import { noteWaiting } from "./place-span.js";
import type { SchedulerStore } from "./store.js";
import type {
  PlaceInput,
  PlacementOut,
  PlaceOutcome,
  RefusalOut,
  ReleaseInput,
  WaitEventOut,
} from "./types.js";

/**
 * A waiting call plans again at least this often (ms), changed state or not: time alone can
 * free it (a busy copy draining, a victim's minimum residency passing, a dead holder's lease
 * ending), and provider states are no longer rewritten at every probe to announce it
 * (docs/rules/binding.md §8).
 */
const REPLAN_EVERY_MS = 1000;

export interface CallLoopDeps {
  /**
   * One placement attempt (Scheduler.place); `queueWaitMs` is what the call waited so far,
   * `turn` its place in the fair order (docs/rules/fairness.md §3).
   */
  place(input: PlaceInput, queueWaitMs: number, turn: FairTurn): Promise<PlaceOutcome>;
  /** Fair admission: the call's turn, its waiter record, the handoff time. */
  fair: Pick<FairShare, "enabled" | "newTurn" | "waiter" | "options">;
  store: Pick<SchedulerStore, "capacity" | "demand">;
  /** The scheduler's clock (epoch ms). */
  now(): number;
  warn(what: string, err: unknown): void;
}

/**
 * Places `input`, waiting up to `limitS` seconds for capacity, driven by state changes: yields
 * `waiting` once before it first blocks, then `placed` or `stand-aside`. Ends quietly when
 * `signal` aborts. The wait demand entry is written while it waits and cleared after.
 */
export async function* placeOrWait(
  d: CallLoopDeps,
  input: PlaceInput,
  signal: AbortSignal,
  limitS: number,
): AsyncGenerator<WaitEventOut> {
  const started = d.now();
  const deadlineMs = started + limitS * 1000;
  const { capacity, demand } = d.store;
  let waitingFor = "";
  const turn = d.fair.newTurn();
  // The waiter record (fairness.md §3): written when the call first waits, renewed while it does.
  let queued: { model: string; renewAt: number } | undefined;
  try {
    for (;;) {
      if (signal.aborted) return;
      const counter = capacity.counter;
      const out = await d.place(input, waitingFor ? d.now() - started : 0, turn);
      if (out.kind === "placed") {
        yield { kind: "placed", placement: out.placement };
        return;
      }
      const refusal = out.refusal;
      const next = afterRefusal(refusal, {
        phase: input.phase,
        cannotWait: input.cannotWait,
        hasStaticBinding: false, // Place already took the static fallback where there is one
        waitLimitS: limitS,
      });
      if (next !== "wait") {
        yield { kind: "stand-aside", refusal };
        return;
      }
      if (!capacity.available) {
        yield { kind: "stand-aside", refusal: note(refusal, "no state watch: not waiting blind") };
        return;
      }
      if (d.now() >= deadlineMs) {
        yield { kind: "stand-aside", refusal: waitLimitRefusal(refusal, limitS) };
        return;
      }
      const writes: Promise<void>[] = [];
      if (!waitingFor) {
        waitingFor = refusal.model;
        turn.position = refusal.queuePosition;
        noteWaiting(refusal.model, refusal.reason);
        yield { kind: "waiting", refusal, deadlineMs };
        writes.push(
          demand
            .putWait(waitingFor, input.agent)
            .then(() => undefined)
            .catch((err) => d.warn("wait demand", err)),
        );
      }
      if (d.fair.enabled && (queued === undefined || d.now() >= queued.renewAt)) {
        const model = queued?.model ?? refusal.model;
        queued = { model, renewAt: d.now() + WAITER_RENEW_MS };
        writes.push(
          demand
            .putQueue(d.fair.waiter(input, turn, model), input.agent)
            .catch((err) => d.warn("waiter record", err)),
        );
      }
      // Together: a waiter record that lands late lets a slot go to calls it ranks before.
      await Promise.all(writes);
      // Held back while slots were free: the handoff clock runs, and the call looks again
      // once it has run out (a better-ranked waiter that does not come loses its turn).
      const owed = refusal.fairDeferral !== undefined && refusal.fairDeferral.freeSlots > 0;
      if (!owed) turn.deferredWhileFreeSinceMs = undefined;
      else turn.deferredWhileFreeSinceMs ??= d.now();
      const wakeBy = owed ? d.fair.options.handoffMs + 1 : REPLAN_EVERY_MS;
      const r = await capacity.awaitChange(counter, Math.min(deadlineMs, d.now() + wakeBy), signal);
      if (r.kind === "aborted") return;
      if (r.kind === "unavailable") {
        yield { kind: "stand-aside", refusal: note(refusal, `the state watch was lost: ${r.reason}`) };
        return;
      }
      // "changed" or "deadline": try again; the deadline check above ends the loop.
    }
  } finally {
    await Promise.all([
      waitingFor
        ? demand.clearWait(waitingFor, input.agent).catch((err) => d.warn("clear wait", err))
        : undefined,
      queued !== undefined
        ? demand.clearQueue(queued.model, input.agent, turn.id).catch((err) => d.warn("clear waiter", err))
        : undefined,
    ]);
  }
}

export type Acquired =
  | { kind: "placed"; placement: PlacementOut; queueWaitMs: number }
  | { kind: "refused"; refusal: RefusalOut; waitedMs: number }
  /** The caller went away while the call waited; nothing is claimed. */
  | { kind: "aborted"; waitedMs: number };

/**
 * The loop's outcome for a caller that only wants the end: placed, refused or aborted. A
 * placement that lands after `signal` aborted is released at once (`giveBack`): nothing stays
 * claimed for a caller that left.
 */
export async function settleLoop(
  events: AsyncIterable<WaitEventOut>,
  signal: AbortSignal,
  now: () => number,
  giveBack: (placement: PlacementOut) => Promise<void>,
): Promise<Acquired> {
  const started = now();
  // A call placed or refused by its first attempt waited for nothing: 0, not the attempt's time.
  let waited = false;
  const waitedMs = () => (waited ? now() - started : 0);
  for await (const ev of events) {
    if (ev.kind === "waiting") waited = true;
    else if (ev.kind === "placed") {
      if (!signal.aborted) return { kind: "placed", placement: ev.placement, queueWaitMs: waitedMs() };
      await giveBack(ev.placement).catch(() => undefined);
      return { kind: "aborted", waitedMs: waitedMs() };
    } else return { kind: "refused", refusal: ev.refusal, waitedMs: waitedMs() };
  }
  return { kind: "aborted", waitedMs: waitedMs() };
}

function note(r: RefusalOut, why: string): RefusalOut {
  return { ...r, message: `${r.message} (${why})` };
}

function waitLimitRefusal(r: RefusalOut, limitS: number): RefusalOut {
  return {
    ...r,
    message: `Every GPU that can serve ${printable(r.model)} stayed busy for ${limitS} s; the cluster is at capacity, ask again shortly.`,
  };
}

/** The release of a placement whose caller left before it was forwarded: nothing to learn. */
export function neverForwarded(ticketId: string): ReleaseInput {
  return {
    ticketId,
    outcome: "unspecified",
    ran: false,
    latencyMs: 0,
    promptTokens: 0,
    promptChars: 0,
    outputTokens: 0,
    error: "client went away before the call was forwarded",
  };
}
