// The binding env is a protocol between the operator (writer) and the sidecar (reader): the
// names are the registry's, and what is written reads back through the registry's parsers.
import { describe, expect, it } from "vitest";
import { BINDING_ENV, SETTINGS } from "../settings/index.js";
import { agentEnv } from "./env.js";
import type { PhaseBinding } from "./types.js";

const phase = (model: string, endpoint: string) => ({ model, endpoint }) as PhaseBinding;

describe("agentEnv", () => {
  it("writes exactly the registry's binding env, and the sidecar reads it back", () => {
    const mulling = [
      { model: "qwen3:32b", score: 70 },
      { model: "qwen3:14b", score: 65 },
    ];
    const env = agentEnv(
      { mulling: phase("qwen3:32b", "http://gpu-a:11434"), triage: phase("qwen3:8b", "http://gpu-b:11434") },
      { mulling, triage: [] },
      { weight: 3, priority: "batch", maxPriority: "standard" },
    );
    expect(Object.keys(env).sort()).toEqual(BINDING_ENV.map((s) => s.name).sort());
    expect(SETTINGS.crewWeight.parse(env[SETTINGS.crewWeight.name])).toBe(3);
    expect(SETTINGS.priority.parse(env[SETTINGS.priority.name])).toBe("batch");
    expect(SETTINGS.crewMaxPriority.parse(env[SETTINGS.crewMaxPriority.name])).toBe("standard");
    expect(SETTINGS.candidatesMulling.parse(env[SETTINGS.candidatesMulling.name])).toEqual(mulling);
    // A phase with no candidates is written as [] and read as none.
    expect(SETTINGS.candidatesTriage.parse(env[SETTINGS.candidatesTriage.name])).toEqual([]);
    expect(SETTINGS.staticEndpoint.parse(env[SETTINGS.staticEndpoint.name])).toBe("http://gpu-a:11434");
    expect(SETTINGS.triageModel.parse(env[SETTINGS.triageModel.name])).toBe("qwen3:8b");
  });

  it("writes no model or endpoint for a phase that is not bound", () => {
    const env = agentEnv({}, { mulling: [], triage: [] });
    expect(Object.keys(env).sort()).toEqual(
      [SETTINGS.candidatesMulling.name, SETTINGS.candidatesTriage.name].sort(),
    );
  });
});
