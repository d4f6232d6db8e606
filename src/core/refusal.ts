// Refusal classification and the human sentences a coordinator can show (docs/rules/placement.md
// §3, §6). model-too-large and prompt-too-large never wait; gpu-busy means "ask again".
import { couldHold } from "./can-run.js";
import type { Candidate } from "./candidates.js";
import { holds } from "./context-fit.js";
import { isWarm } from "./feasibility.js";
import { contextAt, type SnapshotIndex } from "./snapshot.js";

export type RefusalReason = "gpu-busy" | "model-too-large" | "prompt-too-large";

export function gpuBusyMessage(model: string): string {
  return (
    `Every GPU that can run ${model || "the requested model"} is busy right now. ` +
    "That is the cluster's capacity, not a fault: ask again shortly."
  );
}

export function modelTooLargeMessage(model: string, footprintMiB: number, largestUsableMiB: number): string {
  return (
    `${model} needs about ${footprintMiB} MiB of GPU memory, more than any GPU here can give ` +
    `(largest usable: ${largestUsableMiB} MiB). Add a smaller Model or a GPU with more memory.`
  );
}

export function promptTooLargeMessage(model: string, promptTokens: number, largestContext: number): string {
  const largest = largestContext > 0 ? ` (largest: ${largestContext} tokens)` : "";
  return (
    `The prompt, about ${promptTokens} tokens, is longer than the context window of every GPU ` +
    `that can run ${model}${largest}. Raise the provider's per-request context or send less.`
  );
}

export function noCandidateMessage(): string {
  return "No candidate model was given and none is configured for this agent, so nothing can be placed.";
}

/** How a request that found no claim and no queue is refused. */
export interface RefusalClass {
  reason: RefusalReason;
  message: string;
  /** Largest known context (tokens) among the providers that could hold an acceptable model; 0 unknown. */
  largestContext: number;
}

/**
 * Classifies a request that found neither a claim nor a copy to queue at. Over the
 * non-stale providers (not-ready and open-circuit ones included: they may come back):
 * - prompt-too-large: some provider could hold an acceptable model in VRAM (warm there, or
 *   known total with usable ≥ occ), and every such pair has a known context below the prompt;
 * - model-too-large: the preferred's occupancy is known, it is warm nowhere, at least one
 *   provider has a known total, and no provider with a known total has usable ≥ occ;
 * - gpu-busy otherwise.
 * prompt-too-large is checked first: it is the one that must never fall back to an endpoint.
 */
export function classifyRefusal(
  ix: SnapshotIndex,
  acceptable: readonly Candidate[],
  promptTokens: number,
): RefusalClass {
  const preferred = acceptable[0]?.model ?? "";
  let holders = 0;
  let held = 0;
  let largestContext = 0;
  let knownTotals = 0;
  let largestUsable = 0;
  let preferredWarm = false;
  for (const v of ix.providers) {
    if (v.ineligible === "stale") continue;
    if (v.totalKnown) {
      knownTotals++;
      largestUsable = Math.max(largestUsable, v.usable);
    }
    for (const c of acceptable) {
      if (c.model === preferred && isWarm(v, c.model)) preferredWarm = true;
      if (!couldHold(ix, v, c.model)) continue;
      holders++;
      const ctx = contextAt(v, c.model);
      if (ctx !== undefined) largestContext = Math.max(largestContext, ctx);
      if (holds(ctx, promptTokens)) held++;
    }
  }
  if (holders > 0 && held === 0) {
    return {
      reason: "prompt-too-large",
      message: promptTooLargeMessage(preferred, promptTokens, largestContext),
      largestContext,
    };
  }
  const occ = ix.occupancy(preferred);
  if (occ.known && !preferredWarm && knownTotals > 0 && largestUsable < occ.mib) {
    return {
      reason: "model-too-large",
      message: modelTooLargeMessage(preferred, occ.mib, largestUsable),
      largestContext,
    };
  }
  return { reason: "gpu-busy", message: gpuBusyMessage(preferred), largestContext };
}
