// How the proxy answers a scheduler's refusal: each refusal reason is one error code and reason
// of the wire table (src/errors/wire.ts), which gives its statuses, with what the caller needs
// to act on it (README.md in this folder, "Errors").
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { RefusalOut } from "../../src/scheduler/index.js";
import type { ProxySettings } from "./options.js";

const MAX_RETRY_AFTER_S = 60;

export function refusalError(r: RefusalOut, settings: ProxySettings, waitedMs: number): KubemootError {
  const model = r.model;
  switch (r.reason) {
    case "prompt-too-large":
      return new KubemootError(ErrorCode.TooLarge, r.message, {
        reason: "prompt-too-large",
        detail: { model, largest_context: r.largestContext, prompt_tokens: r.promptTokens },
      });
    case "model-too-large":
      return new KubemootError(ErrorCode.TooLarge, r.message, {
        reason: "model-too-large",
        detail: { model },
      });
    case "model-unknown":
      return new KubemootError(ErrorCode.NotFound, r.message, {
        reason: "model-not-found",
        detail: { model },
      });
    case "unschedulable":
      // Never from the proxy: its request names a model, which is always tried (binding.md §9).
      return new KubemootError(ErrorCode.Internal, r.message);
    case "provider-unavailable":
      return new KubemootError(ErrorCode.ProviderFailure, r.message, {
        reason: "provider-unavailable",
        detail: { model, waited_ms: Math.round(waitedMs) },
        retryAfterS: settings.retryAfterS,
      });
    default:
      return new KubemootError(ErrorCode.Busy, r.message, {
        reason: "gpu-busy",
        detail: { model, waited_ms: Math.round(waitedMs) },
        retryAfterS: retryAfterS(r, settings.retryAfterS),
      });
  }
}

/**
 * Retry-After for gpu-busy: the planner's own estimate of when a slot frees, when it queued
 * (rounded up, 1–60 s: a client should come back when there is room, not poll); else the
 * configured value.
 */
export function retryAfterS(r: RefusalOut, fallbackS: number): number {
  const est = r.estimatedWaitS;
  if (est === undefined || !Number.isFinite(est) || est < 0) return fallbackS;
  return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(est)));
}
