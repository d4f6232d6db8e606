// What callers do with a decision: Place answers a refusal for anything that is not a claim;
// a call that cannot wait may fall back to its static endpoint, except on prompt-too-large.
import type { Decision } from "./planner.js";
import { gpuBusyMessage, type RefusalReason } from "./refusal.js";

/** The refusal Place returns for a decision, or undefined for a claim. */
export function refusalOf(
  d: Decision,
):
  | { reason: RefusalReason; model: string; message: string; largestContext: number; estimatedWaitS?: number }
  | undefined {
  switch (d.kind) {
    case "claim":
      return undefined;
    case "queue":
      return {
        reason: "gpu-busy",
        model: d.model,
        message: d.message || gpuBusyMessage(d.model),
        largestContext: 0,
        estimatedWaitS: d.estimatedWaitS,
      };
    case "wait-for-memory":
      return { reason: "gpu-busy", model: d.model, message: d.message, largestContext: 0 };
    case "refuse":
      return { reason: d.reason, model: d.model, message: d.message, largestContext: d.largestContext };
  }
}

/** Whether the caller may wait for a state change and retry (gpu-busy of a mulling call). */
export function shouldWait(d: Decision): boolean {
  return d.kind === "queue" || d.kind === "wait-for-memory";
}

/**
 * Whether a call marked "cannot wait" may use its static endpoint instead: on gpu-busy or
 * model-too-large, never on prompt-too-large (the static endpoint would cut the prompt).
 */
export function staticFallbackAllowed(d: Decision): boolean {
  const r = refusalOf(d);
  return r !== undefined && r.reason !== "prompt-too-large";
}
