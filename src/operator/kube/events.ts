// Kubernetes Events for the binder's warnings (FailedScheduling, and policy problems such as
// PolicyConflict or UnknownPhase), as core/v1 Events so that `kubectl describe` shows them.
//
// FailedScheduling goes on the CrewSchedulingPolicy (as the binder reports it) and, by default,
// also on the Agent itself (`kubectl describe agent` then shows why, as it does for a pending
// Pod). The same event (object, reason, message) is posted once while it keeps occurring, and
// again after `repeatMs` (default 10 min, so it does not expire from the API server's one-hour
// event TTL while the problem lasts); once it stops occurring it is forgotten, so a recurrence
// is posted at once.
import { hostname } from "node:os";
import type { CoreV1Event } from "@kubernetes/client-node";
import type { BindResult, SchedulingEvent } from "../../binding/index.js";
import type { KubeObject } from "./client.js";
import { apiVersionOf, RESOURCES, type ResourceKind } from "./resources.js";

export const DEFAULT_EVENT_REPEAT_MS = 10 * 60_000;
export const REPORTING_COMPONENT = "kubemoot-scheduler";

export interface PlannedEvent extends SchedulingEvent {
  kind: ResourceKind;
  namespace: string | undefined;
  name: string;
}

/** The binder's events, plus each governed agent's FailedScheduling mirrored onto the Agent. */
export function plannedEvents(result: BindResult, onAgents: boolean): PlannedEvent[] {
  const out: PlannedEvent[] = [];
  for (const e of result.events) {
    const parsed = parseObject(e.object);
    if (parsed) out.push({ ...e, ...parsed });
  }
  if (onAgents) {
    for (const a of result.agents) {
      if (!a.policy) continue; // without a policy the binder already reports on the Agent
      for (const u of a.unschedulable) {
        out.push({
          type: "Warning",
          reason: "FailedScheduling",
          object: `Agent/${a.namespace}/${a.name}`,
          message: `phase ${u.phase}: ${u.reason} (CrewSchedulingPolicy ${a.policy.name})`,
          kind: "Agent",
          namespace: a.namespace,
          name: a.name,
        });
      }
    }
  }
  return out;
}

function parseObject(
  ref: string,
): { kind: ResourceKind; namespace: string | undefined; name: string } | undefined {
  const parts = ref.split("/");
  const kind = parts[0] as ResourceKind;
  if (!(kind in RESOURCES)) return undefined;
  if (parts.length === 3) return { kind, namespace: parts[1], name: parts[2]! };
  if (parts.length === 2) return { kind, namespace: undefined, name: parts[1]! };
  return undefined;
}

export function eventKey(e: PlannedEvent): string {
  return `${e.object}\u0000${e.type}\u0000${e.reason}\u0000${e.message}`;
}

/** Remembers when each event was last posted. */
export class EventMemory {
  private readonly posted = new Map<string, number>();
  constructor(private readonly repeatMs = DEFAULT_EVENT_REPEAT_MS) {}

  /** The events to post now, out of those occurring now; forgets those no longer occurring. */
  due(events: readonly PlannedEvent[], nowMs: number): PlannedEvent[] {
    const current = new Set(events.map(eventKey));
    for (const k of [...this.posted.keys()]) if (!current.has(k)) this.posted.delete(k);
    const seen = new Set<string>();
    return events.filter((e) => {
      const k = eventKey(e);
      if (seen.has(k)) return false;
      seen.add(k);
      const last = this.posted.get(k);
      return last === undefined || nowMs - last >= this.repeatMs;
    });
  }

  markPosted(e: PlannedEvent, nowMs: number): void {
    this.posted.set(eventKey(e), nowMs);
  }
}

/** A core/v1 Event about `involved` (its uid and resourceVersion when cached). */
export function coreEvent(
  e: PlannedEvent,
  involved: KubeObject | undefined,
  now: Date,
  seq: number,
): CoreV1Event {
  const ns = e.namespace ?? "default";
  const r = RESOURCES[e.kind];
  const uid = involved?.metadata?.uid;
  const rv = involved?.metadata?.resourceVersion;
  return {
    metadata: { name: `${e.name}.${(now.getTime() * 1000 + (seq % 1000)).toString(16)}`, namespace: ns },
    involvedObject: {
      apiVersion: apiVersionOf(r),
      kind: r.kind,
      name: e.name,
      ...(e.namespace !== undefined ? { namespace: e.namespace } : {}),
      ...(uid !== undefined ? { uid } : {}),
      ...(rv !== undefined ? { resourceVersion: rv } : {}),
    },
    type: e.type,
    reason: e.reason,
    message: e.message.length > 1024 ? `${e.message.slice(0, 1021)}...` : e.message,
    count: 1,
    firstTimestamp: now,
    lastTimestamp: now,
    source: { component: REPORTING_COMPONENT },
    reportingComponent: REPORTING_COMPONENT,
    reportingInstance: hostname(),
  };
}
