// A sidecar's decision records (docs/web-view.md "Decision records"), as scheduler hooks: one
// record per placement, one per call refused (a call that waits is recorded once when it first
// waits, then when it is placed), one per released call with its attribution. Sampled by
// ./decision-sampler.ts, capped by ./decision-record.ts, published at most once on the message
// bus; nothing here waits or throws into the call.
import { randomUUID } from "node:crypto";
import { isSpanContextValid, trace } from "@opentelemetry/api";
import { explainPlan } from "../core/index.js";
import type { AttributionOut, DecisionEvent, PlaceInput, SchedulerHooks } from "../scheduler/index.js";
import type { MessageBus } from "../state/index.js";
import { cutText, decisionSubject, encodeRecord } from "./decision-record.js";
import { DecisionSampler } from "./decision-sampler.js";
import type { DecisionRecord } from "./view-types.js";

export interface DecisionPublisherOptions {
  bus: MessageBus;
  /** The holder id of this process (records name their publisher). */
  instance: string;
  /** The placement policy's name. */
  policy: string;
  /** Records per second at most; 0 = none. */
  ratePerS: number;
  /** The crew of a call (KUBEMOOT_CREW, else its agent's namespace). */
  crewOf: (agent: string) => string;
  /** The agent of a call that names none. */
  defaultAgent: string;
  /** Attribute's answer as proto JSON, for released calls. */
  attributionJson: (a: AttributionOut) => Record<string, unknown>;
  now?: () => number;
}

/** Scheduler hooks that publish this sidecar's decision records; none when the rate is 0. */
export function decisionHooks(o: DecisionPublisherOptions): SchedulerHooks {
  if (!(o.ratePerS > 0)) return {};
  const now = o.now ?? Date.now;
  const sampler = new DecisionSampler(o.ratePerS, now);
  const lastDecision = new WeakMap<PlaceInput, DecisionEvent>();
  const refusedOnce = new WeakSet<PlaceInput>();

  const publish = (r: DecisionRecord) => {
    const bytes = encodeRecord(r);
    if (bytes !== undefined) o.bus.publish(decisionSubject(r.agent), bytes);
  };
  const base = (agent: string, kind: DecisionRecord["kind"], weight: number) => {
    const a = agent || o.defaultAgent;
    // The call's trace (docs/tracing.md), when it is traced: the active span is its placement's.
    const sc = trace.getActiveSpan()?.spanContext();
    const traced = sc !== undefined && isSpanContextValid(sc) ? { traceId: sc.traceId } : {};
    return {
      v: 1 as const,
      at: now(),
      kind,
      agent: a,
      crew: o.crewOf(a),
      instance: o.instance,
      weight,
      ...traced,
    };
  };
  const optionsOf = (input: PlaceInput) => {
    const ev = lastDecision.get(input);
    if (ev === undefined) return {};
    const options = explainPlan(ev.index, ev.request, 3);
    return options.length > 0 ? { options } : {};
  };

  return {
    onDecision(ev) {
      lastDecision.set(ev.input, ev);
    },
    onPlace(outcome, _decision, _elapsedMs, input, queueWaitMs) {
      try {
        if (outcome.kind === "refused" && refusedOnce.has(input)) return;
        const weight = sampler.take(outcome.kind);
        if (outcome.kind === "refused") refusedOnce.add(input);
        if (weight === undefined) return;
        if (outcome.kind === "placed") {
          const p = outcome.placement;
          publish({
            ...base(input.agent, "placed", weight),
            id: p.ticketId,
            model: p.model,
            provider: p.provider,
            engine: p.engine,
            cold: p.coldLoad,
            evicted: p.evicted.slice(0, 16),
            waitMs: Math.round(queueWaitMs),
            policy: o.policy,
            ...optionsOf(input),
            ...(p.priority ? { priority: p.priority } : {}),
            ...(p.queuePosition ? { queuePosition: p.queuePosition } : {}),
            ...(p.bindingRevision ? { bindingRevision: p.bindingRevision } : {}),
          });
        } else {
          const r = outcome.refusal;
          publish({
            ...base(input.agent, "refused", weight),
            id: randomUUID(),
            model: r.model,
            waitMs: Math.round(queueWaitMs),
            reason: r.reason,
            message: cutText(r.message),
            policy: o.policy,
            ...optionsOf(input),
            ...(r.queuePosition ? { queuePosition: r.queuePosition } : {}),
            ...(r.bindingRevision ? { bindingRevision: r.bindingRevision } : {}),
          });
        }
      } catch {
        // a record is best effort: never fail the call over it
      }
    },
    onRelease(a) {
      try {
        const weight = sampler.take("released");
        if (weight === undefined) return;
        publish({
          ...base(a.agent, "released", weight),
          id: a.ticketId,
          model: a.model,
          provider: a.provider,
          engine: a.engine,
          cold: a.coldLoad,
          evicted: a.evicted.slice(0, 16),
          waitMs: Math.round(a.queueWaitMs),
          policy: o.policy,
          attribution: o.attributionJson(a),
        });
      } catch {
        // best effort, as above
      }
    },
  };
}
