import { describe, expect, it } from "vitest";
import type { BindResult } from "../../binding/index.js";
import { coreEvent, EventMemory, plannedEvents } from "./events.js";

const result: BindResult = {
  agents: [
    {
      key: "ns/a",
      namespace: "ns",
      name: "a",
      policy: { namespace: "ns", name: "pol" },
      phases: {},
      candidates: { mulling: [], triage: [] },
      unschedulable: [{ phase: "mulling", reason: "no Model matches require selectors {params: 70B}" }],
      status: { scheduling: {}, conditions: [] },
      env: {},
    },
  ],
  policies: [],
  events: [
    {
      type: "Warning",
      reason: "FailedScheduling",
      object: "CrewSchedulingPolicy/ns/pol",
      message: "agent ns/a phase mulling: no Model matches require selectors {params: 70B}",
    },
  ],
};

describe("events", () => {
  it("mirrors a governed agent's FailedScheduling onto the Agent", () => {
    const planned = plannedEvents(result, true);
    expect(planned.map((e) => [e.kind, e.namespace, e.name, e.reason])).toEqual([
      ["CrewSchedulingPolicy", "ns", "pol", "FailedScheduling"],
      ["Agent", "ns", "a", "FailedScheduling"],
    ]);
    expect(plannedEvents(result, false)).toHaveLength(1);
  });

  it("posts an ongoing event once per repeat interval, and again at once after it stopped", () => {
    const m = new EventMemory(1_000);
    const planned = plannedEvents(result, false);
    const due = m.due(planned, 0);
    expect(due).toHaveLength(1);
    m.markPosted(due[0]!, 0);
    expect(m.due(planned, 999)).toHaveLength(0);
    expect(m.due(planned, 1_000)).toHaveLength(1);
    m.markPosted(due[0]!, 1_000);
    expect(m.due([], 1_100)).toHaveLength(0); // stopped: forgotten
    expect(m.due(planned, 1_200)).toHaveLength(1);
  });

  it("builds a core/v1 Event about the object", () => {
    const [e] = plannedEvents(result, false);
    const now = new Date("2026-05-15T15:30:00Z");
    const ev = coreEvent(e!, { metadata: { uid: "u1", resourceVersion: "42" } }, now, 0);
    expect(ev).toMatchObject({
      metadata: { namespace: "ns" },
      involvedObject: {
        apiVersion: "kubemoot.ai/v1alpha1",
        kind: "CrewSchedulingPolicy",
        name: "pol",
        namespace: "ns",
        uid: "u1",
        resourceVersion: "42",
      },
      type: "Warning",
      reason: "FailedScheduling",
      count: 1,
      firstTimestamp: now,
      source: { component: "kubemoot-scheduler" },
    });
    expect(ev.metadata.name).toMatch(/^pol\.[0-9a-f]+$/);
  });
});
