// Refusal classification and the human sentences a coordinator can show (docs/rules/placement.md
// §3, §6). model-too-large and prompt-too-large never wait; gpu-busy means "ask again".
import { couldHold } from "./can-run.js";
import type { Candidate } from "./candidates.js";
import { holds } from "./context-fit.js";
import { isWarm } from "./feasibility.js";
import { contextAt, type SnapshotIndex } from "./snapshot.js";

export type RefusalReason =
  | "gpu-busy"
  | "model-too-large"
  | "prompt-too-large"
  | "provider-unavailable"
  | "model-unknown";

/** Up to 200 printable characters of a name a caller sent, for quoting it in a sentence. */
export function quoteName(name: string): string {
  let out = "";
  let n = 0;
  for (const ch of name) {
    if (n >= 200) return `${out}…`;
    const code = ch.codePointAt(0) ?? 0;
    out += code < 0x20 || (code >= 0x7f && code < 0xa0) ? "?" : ch;
    n++;
  }
  return out;
}

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

export function providerUnavailableMessage(model: string): string {
  return (
    `No GPU server that can run ${model || "the requested model"} is reachable and healthy right now ` +
    "(down, not ready, or failing). That is an outage, not the cluster's capacity: try again in a few seconds."
  );
}

export function modelUnknownMessage(model: string): string {
  return (
    `No GPU server here has the model "${quoteName(model)}" (loaded or on disk), so none can load it. ` +
    "Check the name, or add it to the fleet (a Model and a provider that serves it)."
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
 * non-stale providers (not-ready, unreachable and open-circuit ones included: they may come
 * back):
 * - prompt-too-large: some provider could hold an acceptable model in VRAM (warm there, or
 *   known total with usable ≥ occ), and every such pair has a known context below the prompt;
 * - model-unknown: every non-stale provider publishes its on-disk models and none has the
 *   preferred one (loaded, on disk or loading);
 * - model-too-large: the preferred's occupancy is known, it is warm nowhere, at least one
 *   provider has a known total, and no provider with a known total has usable ≥ occ;
 * - provider-unavailable: some provider (stale ones included) could serve an acceptable model
 *   with the prompt, but none of those is eligible now;
 * - gpu-busy otherwise: the providers that could serve are up, and full.
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
  let fresh = 0;
  let catalogsKnown = 0;
  let preferredListed = false;
  let servableUp = 0;
  let servableDown = 0;
  for (const v of ix.providers) {
    const servable = acceptable.some(
      (c) => couldHold(ix, v, c.model) && holds(contextAt(v, c.model), promptTokens),
    );
    if (servable && v.ineligible === undefined) servableUp++;
    else if (servable) servableDown++;
    if (v.ineligible === "stale") continue;
    fresh++;
    if (v.catalog !== undefined) catalogsKnown++;
    if (v.catalog?.has(preferred) || isWarm(v, preferred)) preferredListed = true;
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
  if (preferred !== "" && fresh > 0 && catalogsKnown === fresh && !preferredListed) {
    return { reason: "model-unknown", message: modelUnknownMessage(preferred), largestContext };
  }
  const occ = ix.occupancy(preferred);
  if (occ.known && !preferredWarm && knownTotals > 0 && largestUsable < occ.mib) {
    return {
      reason: "model-too-large",
      message: modelTooLargeMessage(preferred, occ.mib, largestUsable),
      largestContext,
    };
  }
  if (servableUp === 0 && servableDown > 0) {
    return { reason: "provider-unavailable", message: providerUnavailableMessage(preferred), largestContext };
  }
  return { reason: "gpu-busy", message: gpuBusyMessage(preferred), largestContext };
}
