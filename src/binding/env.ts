// The agent Deployment's env (docs/rules/binding.md "Bind"). A phase that could not be bound sets
// no model or endpoint variable; the candidate lists are always set (possibly `[]`).
// The names are the settings registry's: the sidecar reads what is written here.
import { SETTINGS } from "../settings/index.js";
import type { AgentResult, Candidate, FairShareSpec } from "./types.js";

/** `[{"model":"qwen3:32b","score":70},…]`: exactly these two keys, in this order. */
export function candidatesJson(list: readonly Candidate[]): string {
  return JSON.stringify(list.map((c) => ({ model: c.model, score: c.score })));
}

export function agentEnv(
  phases: AgentResult["phases"],
  candidates: AgentResult["candidates"],
  fairShare?: FairShareSpec,
): Record<string, string> {
  const env: Record<string, string> = {};
  // The crew's share, as its policy says (docs/rules/fairness.md §2); unset: the sidecar's defaults.
  if (fairShare?.weight !== undefined) env[SETTINGS.crewWeight.name] = String(fairShare.weight);
  if (fairShare?.priority !== undefined) env[SETTINGS.priority.name] = fairShare.priority;
  if (fairShare?.maxPriority !== undefined) env[SETTINGS.crewMaxPriority.name] = fairShare.maxPriority;
  if (phases.mulling) {
    env[SETTINGS.staticModel.name] = phases.mulling.model;
    env[SETTINGS.staticEndpoint.name] = phases.mulling.endpoint;
  }
  if (phases.triage) {
    env[SETTINGS.triageModel.name] = phases.triage.model;
    env[SETTINGS.triageEndpoint.name] = phases.triage.endpoint;
  }
  env[SETTINGS.candidatesMulling.name] = candidatesJson(candidates.mulling);
  env[SETTINGS.candidatesTriage.name] = candidatesJson(candidates.triage);
  return env;
}
