// Status conditions, Kubernetes style: a condition keeps its lastTransitionTime while its
// status does not change.
import type { Condition } from "./types.js";

export function condition(
  previous: readonly Condition[] | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: Date,
): Condition {
  const prev = previous?.find((c) => c.type === next.type);
  const lastTransitionTime =
    prev && prev.status === next.status ? prev.lastTransitionTime : now.toISOString();
  return { ...next, lastTransitionTime };
}
