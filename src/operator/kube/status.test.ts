import { describe, expect, it } from "vitest";
import type { AgentResult, Condition, ModelProvider, PolicyResult } from "../../binding/index.js";
import type { ProviderState } from "../../core/index.js";
import {
  agentCounts,
  agentStatusPatch,
  mergeConditions,
  policyStatusPatch,
  providerStatusPatch,
} from "./status.js";

const T0 = "2026-05-15T15:30:00.000Z";
const scheduled: Condition = {
  type: "Scheduled",
  status: "True",
  reason: "Scheduled",
  message: "m",
  lastTransitionTime: T0,
};

function agentResult(
  scheduling: AgentResult["status"]["scheduling"],
  phases: AgentResult["phases"] = {},
): AgentResult {
  return {
    key: "ns/a",
    namespace: "ns",
    name: "a",
    phases,
    candidates: { mulling: [], triage: [] },
    unschedulable: [],
    status: { scheduling, conditions: [scheduled] },
    env: {},
  };
}

describe("agentStatusPatch", () => {
  const scheduling = { model: "m", modelRef: "m-ref", provider: "p", endpoint: "http://p:1" };

  it("patches scheduling and the Scheduled condition, leaving other status fields and conditions", () => {
    const current = {
      metadata: { name: "a", namespace: "ns" },
      status: { ready: true, conditions: [{ type: "Ready", status: "True" }] },
    };
    expect(agentStatusPatch(current, agentResult(scheduling))).toEqual({
      status: { scheduling, conditions: [{ type: "Ready", status: "True" }, scheduled] },
    });
  });

  it("returns nothing when the stored status (keys in any order) already matches", () => {
    const current = {
      metadata: { name: "a" },
      status: {
        conditions: [
          { type: "Scheduled", status: "True", reason: "Scheduled", message: "m", lastTransitionTime: T0 },
        ],
        scheduling: { endpoint: "http://p:1", provider: "p", modelRef: "m-ref", model: "m" },
      },
    };
    expect(agentStatusPatch(current, agentResult(scheduling))).toBeUndefined();
  });

  it("deletes a triage binding that is gone with null", () => {
    const current = {
      metadata: { name: "a" },
      status: { scheduling: { ...scheduling, triage: scheduling }, conditions: [scheduled] },
    };
    expect(agentStatusPatch(current, agentResult(scheduling))).toEqual({
      status: { scheduling: { triage: null } },
    });
  });
});

describe("policyStatusPatch", () => {
  it("writes counts, unknown phases and observedGeneration", () => {
    const p: PolicyResult = {
      namespace: "ns",
      name: "pol",
      problems: [],
      unknownPhases: ["debate"],
      agents: 3,
      unschedulableAgents: 1,
      status: { conditions: [scheduled], unknownPhases: ["debate"] },
    };
    expect(policyStatusPatch({ metadata: { name: "pol", generation: 4 } }, p)).toEqual({
      status: {
        conditions: [scheduled],
        unknownPhases: ["debate"],
        agents: 3,
        unschedulableAgents: 1,
        observedGeneration: 4,
      },
    });
  });
});

describe("mergeConditions", () => {
  it("replaces ours in place and keeps foreign types", () => {
    const cur = [{ type: "A" }, { type: "Scheduled", status: "False" }, { type: "B" }];
    expect(mergeConditions(cur, [scheduled])).toEqual([{ type: "A" }, scheduled, { type: "B" }]);
    expect(mergeConditions(undefined, [scheduled])).toEqual([scheduled]);
  });
});

describe("providerStatusPatch", () => {
  const provider = (capacity: NonNullable<ModelProvider["status"]["capacity"]>): ModelProvider => ({
    namespace: "kubemoot",
    name: "p",
    labels: {},
    spec: { type: "ollama", endpoint: "http://p:1" },
    status: { ready: true, capacity },
  });
  const state: ProviderState = {
    name: "p",
    endpoint: "http://p:1",
    maxParallel: 2,
    activeCount: 0,
    queueDepth: 0,
    loadedModels: ["m"],
    ready: true,
    lastProbedAt: "2026-05-15T15:30:00Z",
    totalVramMiB: 24000,
    loadedModelFootprintsMiB: { m: 6000 },
    availableModelFootprintsMiB: {},
    contextLength: 8192,
    loadedModelContextLengths: {},
  };
  const overlaid = provider({
    vramTotalMiB: 24000,
    vramUsedMiB: 6000,
    maxParallel: 2,
    contextLength: 8192,
    loadedModels: [{ name: "m", sizeMiB: 6000 }],
  });

  it("without a probe, writes only agentCount", () => {
    const current = { metadata: { name: "p" }, status: { ready: true, capacity: { vramTotalMiB: 1 } } };
    expect(providerStatusPatch(current, undefined, undefined, 3)).toEqual({
      status: { capacity: { agentCount: 3 } },
    });
  });

  it("with a probe, writes ready, lastProbedAt and the probed capacity", () => {
    expect(providerStatusPatch({ metadata: { name: "p" } }, overlaid, state, 1)).toEqual({
      status: {
        ready: true,
        lastProbedAt: "2026-05-15T15:30:00Z",
        capacity: {
          agentCount: 1,
          vramTotalMiB: 24000,
          vramUsedMiB: 6000,
          maxParallel: 2,
          contextLength: 8192,
          loadedModels: [{ name: "m", sizeMiB: 6000 }],
        },
      },
    });
  });

  it("skips a lastProbedAt-only change younger than the refresh interval, writes an older one", () => {
    const written = {
      metadata: { name: "p" },
      status: providerStatusPatch({ metadata: { name: "p" } }, overlaid, state, 1)!.status as object,
    };
    const later = (s: string) => ({ ...state, lastProbedAt: s });
    expect(providerStatusPatch(written, overlaid, later("2026-05-15T15:30:30Z"), 1, 60_000)).toBeUndefined();
    expect(providerStatusPatch(written, overlaid, later("2026-05-15T15:31:00Z"), 1, 60_000)).toEqual({
      status: { lastProbedAt: "2026-05-15T15:31:00Z" },
    });
    // Any other change goes out at once, lastProbedAt with it.
    expect(providerStatusPatch(written, overlaid, later("2026-05-15T15:30:30Z"), 2, 60_000)).toEqual({
      status: { lastProbedAt: "2026-05-15T15:30:30Z", capacity: { agentCount: 2 } },
    });
  });
});

describe("providerStatusPatch: the EngineMatches condition", () => {
  const down: ProviderState = {
    name: "v",
    endpoint: "http://v:8000",
    maxParallel: 1,
    activeCount: 0,
    queueDepth: 0,
    loadedModels: [],
    ready: false,
    lastProbedAt: "2026-05-15T15:30:00Z",
    totalVramMiB: 0,
    loadedModelFootprintsMiB: {},
    availableModelFootprintsMiB: {},
    contextLength: 0,
    loadedModelContextLengths: {},
    engine: "vllm",
  };
  const now = new Date(T0);
  const mismatch = {
    declared: "vllm" as const,
    detected: "ollama" as const,
    message: "declared vllm, but ollama answers",
  };
  const other = { type: "Other", status: "True", reason: "R", message: "kept", lastTransitionTime: T0 };

  it("a wrong engine: EngineMatches False, reason EngineMismatch, naming both engines; ready false", () => {
    const current = { metadata: { name: "v" }, status: { conditions: [other] } };
    const patch = providerStatusPatch(current, undefined, down, 0, 60_000, { mismatch, now });
    expect(patch?.status).toMatchObject({
      ready: false,
      conditions: [
        other,
        {
          type: "EngineMatches",
          status: "False",
          reason: "EngineMismatch",
          message: "declared engine vllm, but ollama answers at http://v:8000",
          lastTransitionTime: T0,
        },
      ],
    });
  });

  it("no condition is written while the engine matches and none was", () => {
    const patch = providerStatusPatch(
      { metadata: { name: "v" } },
      undefined,
      { ...down, ready: true },
      0,
      60_000,
      {
        mismatch: undefined,
        now,
      },
    );
    expect(patch?.status).not.toHaveProperty("conditions");
  });

  it("once it answers as declared, the condition turns True (lastTransitionTime moves)", () => {
    const was = providerStatusPatch({ metadata: { name: "v" } }, undefined, down, 0, 60_000, {
      mismatch,
      now,
    });
    const current = { metadata: { name: "v" }, status: was!.status as object };
    const later = new Date("2026-05-15T15:40:00.000Z");
    const patch = providerStatusPatch(current, undefined, { ...down, ready: true }, 0, 60_000, {
      mismatch: undefined,
      now: later,
    });
    expect(patch?.status).toMatchObject({
      ready: true,
      conditions: [
        {
          type: "EngineMatches",
          status: "True",
          reason: "EngineMatches",
          lastTransitionTime: later.toISOString(),
        },
      ],
    });
    // Still mismatched on the next probe: the same condition, no transition, no write of it.
    const again = providerStatusPatch(current, undefined, down, 0, 60_000, { mismatch, now: later });
    expect(again?.status ?? {}).not.toHaveProperty("conditions");
  });
});

describe("agentCounts", () => {
  it("counts distinct agents per provider over both phases", () => {
    const b = (provider: string) => ({
      model: "m",
      modelRef: "m",
      provider,
      endpoint: "e",
      engine: "ollama" as const,
      score: 0,
      providerNamespace: "k",
    });
    const a1 = { ...agentResult({}, { mulling: b("x"), triage: b("x") }), key: "ns/a1" };
    const a2 = { ...agentResult({}, { mulling: b("x"), triage: b("y") }), key: "ns/a2" };
    expect(Object.fromEntries(agentCounts([a1, a2]))).toEqual({ "k/x": 2, "k/y": 1 });
  });
});
