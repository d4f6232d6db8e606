// Running the binder in its tests (src/binding/bind*.test.ts): bind at the fixtures' NOW, the one
// agent of a result, each agent's provider per phase, and a topology spread over both phases.
import { expect } from "vitest";
import { bind } from "../../src/binding/bind.js";
import type { AgentResult, BindResult, ClusterSnapshot, TopologySpread } from "../../src/binding/types.js";
import { NOW } from "./fixtures.js";

export function run(s: ClusterSnapshot, o: Partial<Parameters<typeof bind>[1]> = {}): BindResult {
  return bind(s, { now: NOW, ...o });
}

export function only(r: BindResult): AgentResult {
  expect(r.agents).toHaveLength(1);
  return r.agents[0]!;
}

export function picks(r: BindResult, phase: "mulling" | "triage"): Record<string, string | undefined> {
  return Object.fromEntries(r.agents.map((a) => [a.name, a.phases[phase]?.provider]));
}

export const spread = (
  whenUnsatisfiable: TopologySpread["whenUnsatisfiable"],
  topologyKey = "provider",
): TopologySpread => ({
  whenUnsatisfiable,
  topologyKey,
  phaseKeys: ["mulling", "triage"],
});
