// The placement policies, by name (docs/rules/placement.md §5). Adding one is a file beside
// these that exports a Policy, and one line below; KUBEMOOT_POLICY and the simulation take
// every name listed here.
import { DEFAULT_PLANNER_OPTIONS } from "../snapshot.js";
import type { Policy } from "./policy.js";

export type { PlanOption, PolicyRequest } from "./policy.js";

import { timePolicy } from "./time.js";
import { weightedPolicy } from "./weighted.js";

/** The default: by expected seconds until the call finishes (the planner options' default). */
export const DEFAULT_POLICY = DEFAULT_PLANNER_OPTIONS.policy;

const REGISTRY: ReadonlyMap<string, Policy> = new Map(
  [timePolicy, weightedPolicy].map((p) => [p.name, p] as const),
);

/** Every registered policy's name, the default first. */
export const POLICY_NAMES: readonly string[] = [...REGISTRY.keys()];

export function isPolicyName(name: string): boolean {
  return REGISTRY.has(name);
}

/** The policy registered as `name`; an unknown name is a caller's bug (inputs are validated). */
export function policyNamed(name: string): Policy {
  const p = REGISTRY.get(name);
  if (p === undefined) {
    throw new RangeError(`unknown placement policy "${name}" (one of ${POLICY_NAMES.join(", ")})`);
  }
  return p;
}
