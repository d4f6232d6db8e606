// How the proxy answers what the scheduler said: a refusal or a scheduler error becomes the
// proxy's JSON error with the status that names its class (README.md in this folder).
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { RefusalOut } from "../../src/scheduler/index.js";
import { ProxyError } from "./http-errors.js";
import type { ProxySettings } from "./options.js";

const MAX_RETRY_AFTER_S = 60;

export function refusalError(r: RefusalOut, settings: ProxySettings, waitedMs: number): ProxyError {
  switch (r.reason) {
    case "prompt-too-large":
      return new ProxyError(413, "prompt-too-large", r.message, {
        model: r.model,
        largest_context: r.largestContext,
        prompt_tokens: r.promptTokens,
      });
    case "model-too-large":
      return new ProxyError(507, "model-too-large", r.message, { model: r.model });
    case "model-unknown":
      return new ProxyError(404, "model-not-found", r.message, { model: r.model });
    case "provider-unavailable":
      return new ProxyError(
        503,
        "provider-unavailable",
        r.message,
        { model: r.model, waited_ms: Math.round(waitedMs) },
        { "retry-after": String(settings.retryAfterS) },
      );
    default:
      return new ProxyError(
        503,
        "gpu-busy",
        r.message,
        { model: r.model, waited_ms: Math.round(waitedMs) },
        { "retry-after": String(retryAfterS(r, settings.retryAfterS)) },
      );
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

export function schedulerError(err: unknown): ProxyError {
  if (err instanceof ProxyError) return err;
  if (KubemootError.is(err)) {
    if (err.code === ErrorCode.InvalidArgument) return new ProxyError(400, "bad-request", err.message);
    if (err.code === ErrorCode.PermissionDenied) {
      return new ProxyError(403, "forbidden", err.message, err.field ? { field: err.field } : {});
    }
    if (err.code === ErrorCode.ShuttingDown) return new ProxyError(503, "shutting-down", err.message);
    if (err.code === ErrorCode.StateUnavailable) {
      return new ProxyError(503, "state-unavailable", `the shared state cannot be read: ${err.message}`);
    }
  }
  return new ProxyError(
    500,
    "internal",
    `internal error: ${err instanceof Error ? err.message : String(err)}`,
  );
}
