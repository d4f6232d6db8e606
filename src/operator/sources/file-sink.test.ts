import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentResult, BindResult } from "../../binding/index.js";
import { bindingFilePath, FileBindingSink, readBindingFile } from "./file-sink.js";

const T = "2026-05-15T15:30:00.000Z";

function agent(ns: string, name: string, model: string): AgentResult {
  const mulling = {
    model,
    modelRef: model,
    provider: "p",
    endpoint: "http://p:1",
    engine: "ollama" as const,
    score: 10,
  };
  return {
    key: `${ns}/${name}`,
    namespace: ns,
    name,
    policy: { namespace: ns, name: "pol" },
    phases: { mulling },
    candidates: { mulling: [{ model, score: 10 }], triage: [] },
    unschedulable: [{ phase: "triage", reason: "nope" }],
    status: {
      scheduling: { model, modelRef: model, provider: "p", endpoint: "http://p:1" },
      conditions: [
        { type: "Scheduled", status: "False", reason: "Unschedulable", message: "m", lastTransitionTime: T },
      ],
    },
    env: { KUBEMOOT_MODEL_MODEL: model },
  };
}

const result = (...agents: AgentResult[]): BindResult => ({
  agents,
  policies: [
    {
      namespace: "crew",
      name: "pol",
      problems: [],
      unknownPhases: [],
      agents: agents.length,
      unschedulableAgents: agents.length,
      status: { conditions: [], unknownPhases: [] },
    },
  ],
  events: [],
});

describe("FileBindingSink", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "kubemoot-sink-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes per-agent files (a superset of the dry run entry) and skips unchanged ones", async () => {
    const sink = new FileBindingSink({ dir });
    const first = await sink.write(result(agent("crew", "a", "m1"), agent("crew", "b", "m1")));
    expect(first).toMatchObject({
      writes: 3,
      skipped: 0,
      failures: [],
      detail: { agentFile: 2, bindingsFile: 1 },
    });
    expect(await readBindingFile(dir, "crew", "a")).toEqual({
      version: 1,
      agent: "crew/a",
      namespace: "crew",
      name: "a",
      crewSchedulingPolicy: "pol",
      mulling: {
        model: "m1",
        modelRef: "m1",
        provider: "p",
        endpoint: "http://p:1",
        engine: "ollama",
        score: 10,
      },
      candidates: { mulling: [{ model: "m1", score: 10 }], triage: [] },
      unschedulable: [{ phase: "triage", reason: "nope" }],
      env: { KUBEMOOT_MODEL_MODEL: "m1" },
      scheduling: { model: "m1", modelRef: "m1", provider: "p", endpoint: "http://p:1" },
      conditions: [expect.objectContaining({ type: "Scheduled", lastTransitionTime: T })],
    });
    const again = await sink.write(result(agent("crew", "a", "m1"), agent("crew", "b", "m2")));
    expect(again).toMatchObject({ writes: 2, skipped: 1, detail: { agentFile: 1, bindingsFile: 1 } });
  });

  it("removes files of agents that are gone, and empty namespace directories", async () => {
    const sink = new FileBindingSink({ dir });
    await sink.write(result(agent("crew", "a", "m"), agent("other", "b", "m")));
    await writeFile(join(dir, "bindings", "crew", "notes.txt"), "kept: not a binding file");
    const r = await sink.write(result(agent("crew", "a", "m")));
    expect(r.detail.agentFileRemoved).toBe(1);
    expect(await readdir(join(dir, "bindings"))).toEqual(["crew"]);
    expect((await readdir(join(dir, "bindings", "crew"))).sort()).toEqual(["a.json", "notes.txt"]);
  });

  it("restores agent and policy statuses from bindings.json", async () => {
    const sink = new FileBindingSink({ dir });
    expect((await sink.restore()).agents.size).toBe(0);
    await sink.write(result(agent("crew", "a", "m")));
    const restored = await new FileBindingSink({ dir }).restore();
    expect(restored.agents.get("crew/a")).toEqual(agent("crew", "a", "m").status);
    expect(restored.policies.get("crew/pol")).toEqual({ conditions: [] });
    await writeFile(join(dir, "bindings.json"), "{not json");
    expect((await new FileBindingSink({ dir }).restore()).agents.size).toBe(0);
  });

  it("reports a failed write instead of throwing", async () => {
    await writeFile(join(dir, "bindings"), "a file where a directory should be");
    const r = await new FileBindingSink({ dir }).write(result(agent("crew", "a", "m")));
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]!.target).toContain(join("bindings", "crew", "a.json"));
    expect(JSON.parse(await readFile(join(dir, "bindings.json"), "utf8")).agents["crew/a"]).toBeDefined();
  });

  it("paths are built from Kubernetes names only", () => {
    expect(bindingFilePath("/out", "crew", "a.b")).toBe(join("/out", "bindings", "crew", "a.b.json"));
    expect(() => bindingFilePath("/out", "..", "a")).toThrow();
    expect(() => bindingFilePath("/out", "crew", "a/b")).toThrow();
  });
});
