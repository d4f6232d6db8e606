// The agent Deployment's env (docs/rules/binding.md "Bind"). A phase that could not be bound sets
// no model or endpoint variable; the candidate lists are always set (possibly `[]`).
import type { AgentResult, Candidate } from "./types.js";

export const ENV_MODEL = "KUBEMOOT_MODEL_MODEL";
export const ENV_ENDPOINT = "KUBEMOOT_MODEL_ENDPOINT";
export const ENV_TRIAGE_MODEL = "KUBEMOOT_TRIAGE_MODEL_MODEL_ID";
export const ENV_TRIAGE_ENDPOINT = "KUBEMOOT_TRIAGE_MODEL_ENDPOINT";
export const ENV_CANDIDATES_MULLING = "KUBEMOOT_MODEL_CANDIDATES_MULLING";
export const ENV_CANDIDATES_TRIAGE = "KUBEMOOT_MODEL_CANDIDATES_TRIAGE";

/** `[{"model":"qwen3:32b","score":70},…]`: exactly these two keys, in this order. */
export function candidatesJson(list: readonly Candidate[]): string {
  return JSON.stringify(list.map((c) => ({ model: c.model, score: c.score })));
}

export function agentEnv(
  phases: AgentResult["phases"],
  candidates: AgentResult["candidates"],
): Record<string, string> {
  const env: Record<string, string> = {};
  if (phases.mulling) {
    env[ENV_MODEL] = phases.mulling.model;
    env[ENV_ENDPOINT] = phases.mulling.endpoint;
  }
  if (phases.triage) {
    env[ENV_TRIAGE_MODEL] = phases.triage.model;
    env[ENV_TRIAGE_ENDPOINT] = phases.triage.endpoint;
  }
  env[ENV_CANDIDATES_MULLING] = candidatesJson(candidates.mulling);
  env[ENV_CANDIDATES_TRIAGE] = candidatesJson(candidates.triage);
  return env;
}
