// The placement span, `kubemoot.place` (docs/tracing.md "The placement span"): one per call that
// asks for a GPU (a Place, a Wait, the proxy's acquire), covering its waiting, with events for
// the wait, each replan and each lost claim, and the decision's attributes at its end. A place
// attempt inside a call that already has the span adds to it; one outside (the Place RPC)
// opens its own. Untraced (no SDK started), the call runs without any span, not even a no-op one.
import {
  type Context,
  context,
  createContextKey,
  type Span,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { explainPlan, type PlanRequest, type SnapshotIndex } from "../core/index.js";
import { ATTR, EVENT, SPAN, tracer, tracingActive } from "../tracing/index.js";
import type { PlaceInput, PlacementOut, PlaceOutcome, RefusalOut } from "./types.js";

const KEY = createContextKey("kubemoot.place span state");

interface PlaceSpanState {
  span: Span;
  replans: number;
  waited: boolean;
  /** The last decision's index and question, to explain it once at the end (recording spans only). */
  last?: { ix: SnapshotIndex; request: PlanRequest };
}

function state(ctx: Context = context.active()): PlaceSpanState | undefined {
  return ctx.getValue(KEY) as PlaceSpanState | undefined;
}

/** A new placement span for `input`, a child of the active span, and the context that holds it. */
function open(input: PlaceInput, policy: string): { s: PlaceSpanState; ctx: Context } {
  const span = tracer().startSpan(SPAN.place, {
    attributes: { [ATTR.placePolicy]: policy, ...(input.agent ? { [ATTR.placeAgent]: input.agent } : {}) },
  });
  const s: PlaceSpanState = { span, replans: 0, waited: false };
  return { s, ctx: trace.setSpan(context.active(), span).setValue(KEY, s) };
}

/** The end of a recording span: the comparison behind the choice, and the replans. */
function close(s: PlaceSpanState): void {
  explain(s);
  s.span.setAttribute(ATTR.placeReplans, s.replans);
}

/** Runs `fn` inside a new placement span for `input`, a child of the active span. */
export async function inPlaceSpan<T>(
  input: PlaceInput,
  policy: string,
  fn: () => Promise<T>,
  end: (span: Span, result: T) => void,
): Promise<T> {
  // Untraced: not even the no-op span and its contexts (docs/tracing.md "Configuration").
  if (!tracingActive()) return fn();
  const { s, ctx } = open(input, policy);
  const { span } = s;
  try {
    const result = await context.with(ctx, fn);
    if (span.isRecording()) {
      end(span, result);
      close(s);
    }
    return result;
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute(ATTR.errorType, (err as { code?: string }).code ?? "Error");
    throw err;
  } finally {
    span.end();
  }
}

/** The async generator's steps, each inside the placement span (the Wait RPC's events). */
export async function* inPlaceSpanStream<T>(
  input: PlaceInput,
  policy: string,
  events: AsyncGenerator<T>,
  last: (span: Span, ev: T) => void,
): AsyncGenerator<T> {
  if (!tracingActive()) {
    yield* events;
    return;
  }
  const { s, ctx } = open(input, policy);
  const { span } = s;
  try {
    for (;;) {
      const r = await context.with(ctx, () => events.next());
      if (r.done) break;
      if (span.isRecording()) last(span, r.value);
      yield r.value;
    }
    if (span.isRecording()) close(s);
  } finally {
    await events.return(undefined);
    span.end();
  }
}

/** Whether a placement span is open here (a place attempt inside a call that has one). */
export function hasPlaceSpan(): boolean {
  return state() !== undefined;
}

/** One decision of the call: a second one within an attempt is a replan after a lost claim. */
export function notePlanned(attempt: number, ix: SnapshotIndex, request: PlanRequest): void {
  const s = state();
  if (s === undefined || !s.span.isRecording()) return;
  s.last = { ix, request };
  if (attempt > 0) {
    s.replans++;
    s.span.addEvent(EVENT.replan, { attempt });
  }
}

/** The call begins to wait for capacity (once). */
export function noteWaiting(model: string, reason: string): void {
  const s = state();
  if (s === undefined || s.waited) return;
  s.waited = true;
  s.span.addEvent(EVENT.waiting, { [ATTR.placeModel]: model, [ATTR.placeRefusal]: reason });
}

/** A claim lost its compare-and-set to another decision. */
export function noteClaimConflict(provider: string, reason: string): void {
  state()?.span.addEvent(EVENT.claimConflict, { [ATTR.placeProvider]: provider, reason });
}

/** The outcome's attributes (a placement, a refusal, or a Wait told to stand aside). */
export function outcomeAttributes(
  span: Span,
  outcome: PlaceOutcome | { kind: "stand-aside"; refusal: RefusalOut } | undefined,
  queueWaitMs: number,
): void {
  span.setAttribute(ATTR.placeQueueWaitS, queueWaitMs / 1000);
  if (outcome === undefined) return;
  if (outcome.kind === "placed") {
    const p = outcome.placement;
    span.setAttributes({
      [ATTR.placeProvider]: p.provider,
      [ATTR.placeModel]: p.model,
      [ATTR.placeEngine]: p.engine,
      [ATTR.placeCold]: p.coldLoad,
      [ATTR.placeEvicted]: p.evicted,
      [ATTR.placeTicket]: p.ticketId,
      ...(p.priority ? { [ATTR.placeBand]: p.priority } : {}),
    });
  } else {
    span.setAttributes({
      [ATTR.placeRefusal]: outcome.refusal.reason,
      [ATTR.placeModel]: outcome.refusal.model,
    });
  }
}

/** What an acquire ended with (call-loop.ts Acquired), as attributes. */
export function acquiredAttributes(
  span: Span,
  a:
    | { kind: "placed"; placement: PlacementOut; queueWaitMs: number }
    | { kind: "refused"; refusal: RefusalOut; waitedMs: number }
    | { kind: "aborted"; waitedMs: number },
): void {
  if (a.kind === "placed") outcomeAttributes(span, a, a.queueWaitMs);
  else outcomeAttributes(span, a.kind === "refused" ? a : undefined, a.waitedMs);
}

/** The chosen option's expected seconds and the runner-up's (the time policy explains itself). */
function explain(s: PlaceSpanState): void {
  if (s.last === undefined) return;
  const [best, next] = explainPlan(s.last.ix, s.last.request, 2);
  if (best !== undefined) s.span.setAttribute(ATTR.placeExpectedS, best.seconds);
  if (next !== undefined) {
    s.span.setAttribute(ATTR.placeRunnerUpS, next.seconds);
    s.span.setAttribute(ATTR.placeRunnerUp, `${next.provider} ${next.model} ${next.kind}`);
  }
}
