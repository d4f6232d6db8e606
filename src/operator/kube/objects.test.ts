import { describe, expect, it } from "vitest";
import { convertObjects } from "./objects.js";

const V = "kubemoot.ai/v1alpha1";

describe("convertObjects", () => {
  it("reads cluster objects like manifests, plus conditions and lastUnschedulable", () => {
    const { snapshot, issues } = convertObjects({
      models: [
        {
          apiVersion: V,
          kind: "Model",
          metadata: { name: "m", namespace: "kubemoot", resourceVersion: "5", labels: { params: "8B" } },
          spec: { model: "qwen3:8b", providerRef: "p" },
        },
      ],
      providers: [
        {
          apiVersion: V,
          kind: "ModelProvider",
          metadata: { name: "p", namespace: "kubemoot" },
          spec: { type: "ollama", endpoint: "http://p:11434" },
          status: { ready: true, capacity: { maxParallel: 2, agentCount: 7 } },
        },
      ],
      agents: [
        {
          apiVersion: V,
          kind: "Agent",
          metadata: { name: "a", namespace: "ns" },
          spec: { capabilities: ["x"] },
          status: {
            scheduling: {
              model: "qwen3:8b",
              provider: "p",
              lastUnschedulable: {
                phase: "triage",
                reason: "r",
                observedAt: "t",
                crewSchedulingPolicy: "pol",
              },
            },
            conditions: [
              {
                type: "Scheduled",
                status: "True",
                reason: "Scheduled",
                message: "",
                lastTransitionTime: "t0",
              },
            ],
          },
        },
      ],
      policies: [
        {
          apiVersion: V,
          kind: "CrewSchedulingPolicy",
          metadata: { name: "pol", namespace: "ns" },
          spec: { crewRef: "c" },
          status: { conditions: [{ type: "Valid", status: "True", lastTransitionTime: "t1" }] },
        },
      ],
      archetypes: [],
    });
    expect(issues).toEqual([]);
    expect(snapshot.models[0]).toMatchObject({ name: "m", namespace: "kubemoot", status: { ready: true } });
    // agentCount is the operator's own output; it is not fed back into the filter.
    expect(snapshot.providers[0]!.status.capacity).toEqual({ maxParallel: 2 });
    expect(snapshot.agents[0]!.status).toEqual({
      scheduling: {
        model: "qwen3:8b",
        provider: "p",
        lastUnschedulable: { phase: "triage", reason: "r", observedAt: "t", crewSchedulingPolicy: "pol" },
      },
      conditions: [
        { type: "Scheduled", status: "True", reason: "Scheduled", message: "", lastTransitionTime: "t0" },
      ],
    });
    expect(snapshot.policies[0]!.status!.conditions![0]).toMatchObject({
      type: "Valid",
      lastTransitionTime: "t1",
    });
  });

  it("skips an invalid object with an issue naming it and its field", () => {
    const { snapshot, issues } = convertObjects({
      models: [
        {
          apiVersion: V,
          kind: "Model",
          metadata: { name: "bad", namespace: "kubemoot", resourceVersion: "9" },
          spec: { model: "x", providerRef: "p", vramMib: "lots" },
        },
      ],
      providers: [],
      agents: [],
      policies: [],
      archetypes: [],
    });
    expect(snapshot.models).toEqual([]);
    expect(issues).toEqual([
      expect.objectContaining({
        kind: "Model",
        object: "kubemoot/bad",
        resourceVersion: "9",
        field: "spec.vramMib",
      }),
    ]);
  });
});
