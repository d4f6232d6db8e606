// Taints and tolerations exactly as Kubernetes matches them (core/v1 Toleration.ToleratesTaint).
import type { Taint, TaintEffect, Toleration } from "./types.js";

export function tolerates(t: Toleration, taint: Taint): boolean {
  // An absent effect tolerates every effect; an absent key (with Exists) every key.
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  return t.operator === "Exists" || (t.value ?? "") === (taint.value ?? "");
}

/** Taints with one of `effects` that no toleration tolerates. */
export function untolerated(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
  effects: readonly TaintEffect[],
): Taint[] {
  return taints.filter(
    (taint) => effects.includes(taint.effect) && !tolerations.some((t) => tolerates(t, taint)),
  );
}
