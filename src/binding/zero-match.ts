// Reasons a phase cannot be bound, in the style of kube-scheduler's FailedScheduling and
// naming the selector:
//   no Model matches require selectors {capability/tool-calling: true, params: 14B|32B}
//   no feasible Model for require selectors {…}: 1 provider not ready, 2 insufficient VRAM
//   invalid require selector: spec.rules[0].require.matchExpressions[0].operator: …
//   topologySpread DoNotSchedule: no feasible Model for require selectors {…} outside provider=ollama-a (taken by mulling)

import { REQUIRE_SELECTOR } from "./filter.js";
import { cmp } from "./order.js";
import type { FilterStatus } from "./plugin.js";
import { type CompiledRule, CREW_LABEL } from "./policy.js";

/**
 * The reason no pair passed the filter; `statuses` holds one status per visible Model. Failures
 * other than the require selector are counted by reason, most frequent first, then by text.
 */
export function zeroMatchReason(rule: CompiledRule, statuses: readonly FilterStatus[]): string {
  if (!rule.require.ok) return `invalid require selector: ${rule.require.error}`;
  const text = rule.require.selector.text;
  const counts = new Map<string, number>();
  for (const s of statuses) {
    if (s.ok || s.plugin === REQUIRE_SELECTOR) continue;
    counts.set(s.reason, (counts.get(s.reason) ?? 0) + 1);
  }
  if (counts.size === 0) return `no Model matches require selectors ${text}`;
  const parts = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]))
    .map(([r, n]) => `${n} ${r}`);
  return `no feasible Model for require selectors ${text}: ${parts.join(", ")}`;
}

/** DoNotSchedule found feasible pairs, but only in domains earlier phases took. */
export function spreadReason(
  rule: CompiledRule,
  taken: readonly { phase: string; domain: string }[],
): string {
  const text = rule.require.ok ? rule.require.selector.text : "{}";
  const domains = taken.map((t) => `${t.domain} (taken by ${t.phase})`).join(", ");
  return `topologySpread DoNotSchedule: no feasible Model for require selectors ${text} outside ${domains}`;
}

export function noPolicyReason(crew: string | undefined, namespace: string): string {
  return crew === undefined
    ? `no CrewSchedulingPolicy applies: the agent has no ${CREW_LABEL} label`
    : `no CrewSchedulingPolicy for crew ${crew} in namespace ${namespace}`;
}
