// What a provider's failure before any byte was sent becomes: one error code and reason of the
// wire table (src/errors/wire.ts), whose statuses the client gets (README.md, "Errors"):
//   connection refused / reset, 5xx, 404 from the provider → provider-failure;
//   429 / 503 from the provider (its own queue is full)    → provider-busy, with Retry-After;
//   400 / 413 / 422 / 501 from the provider                → bad-request (the caller's body);
//   a 500 refusing a field (llama.cpp's tools without --jinja) → bad-request;
//   a 404 or 405 from the engine's router                  → route-not-served;
//   no answer within the timeout                           → timeout.
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { DeadlineState, ForwardInput, ForwardOutcome } from "./call-context.js";
import { PATHS, routeNotServed } from "./upstream-routes.js";

const REFUSED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
/** Errors that say the provider cannot be reached at all (not that it answered badly). */
const UNREACHABLE = new Set([
  ...REFUSED,
  "ECONNRESET",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_CLOSED",
]);

/** Whether `err` is a refused, reset or unroutable connection to the provider. */
export function unreachableError(err: unknown): boolean {
  const code = errCode(err);
  return code !== undefined && UNREACHABLE.has(code);
}

function errCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code !== "") return code;
    const errors = (e as { errors?: unknown }).errors;
    e = Array.isArray(errors) && errors.length > 0 ? errors[0] : (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** An error's message with its system code, once. */
export function describe(err: unknown): string {
  const code = errCode(err);
  const msg = err instanceof Error ? err.message : String(err);
  return code && !msg.includes(code) ? `${msg} (${code})` : msg;
}

/**
 * 500s that refuse a field of the caller's request rather than fail: llama-server started
 * without --jinja answers `tools` and `tool_choice` so (src/engines/README.md).
 */
const FIELD_REFUSALS = [/^tools? param requires --jinja flag$/, /^tool_choice param requires --jinja flag$/];

function refusesField(status: number, message: string): boolean {
  return status === 500 && FIELD_REFUSALS.some((re) => re.test(message));
}

function upstreamMessage(text: string): string {
  try {
    const v = JSON.parse(text) as { error?: unknown };
    if (typeof v?.error === "string") return v.error;
    const m = (v?.error as { message?: unknown } | undefined)?.message;
    if (typeof m === "string") return m;
    // vLLM's error body is OpenAI's error object at the top level.
    const top = (v as { message?: unknown } | undefined)?.message;
    if (typeof top === "string") return top;
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 300) || "(empty body)";
}

/** A provider that answered an error status before any byte went to the client. */
export function statusError(
  i: ForwardInput,
  status: number,
  text: string,
): { error: KubemootError; providerFault: boolean } {
  const msg = upstreamMessage(text);
  const detail = { provider: i.provider, upstream_status: status };
  if (routeNotServed(status, text)) {
    // The provider is fine; it just does not serve this API (e.g. an older engine).
    const route = PATHS[i.translation?.target ?? i.api];
    const message = `provider ${i.provider} does not serve ${route} (it answered ${status}: ${msg})`;
    return {
      error: new KubemootError(ErrorCode.NotFound, message, { reason: "route-not-served", detail }),
      providerFault: false,
    };
  }
  // 501: the engine cannot do this with this model (e.g. embeddings from a chat model). A 500
  // that names a field the engine was not started to take refuses the request, not the engine.
  if (status === 400 || status === 413 || status === 422 || status === 501 || refusesField(status, msg)) {
    const message = `the provider rejected the request: ${msg}`;
    return { error: new KubemootError(ErrorCode.InvalidArgument, message, { detail }), providerFault: false };
  }
  if (status === 429 || status === 503) {
    const message = `provider ${i.provider} is busy: ${msg}`;
    const options = { reason: "provider-busy", detail, retryAfterS: i.retryAfterS } as const;
    return { error: new KubemootError(ErrorCode.Busy, message, options), providerFault: true };
  }
  const what =
    status === 404
      ? `provider ${i.provider} does not have model ${i.model}`
      : `provider ${i.provider} failed`;
  return {
    error: new KubemootError(ErrorCode.ProviderFailure, `${what}: ${msg}`, { detail }),
    providerFault: true,
  };
}

/** The request to the provider failed before any answer: why, as the call's outcome. */
export function requestFailure(
  i: ForwardInput,
  deadline: DeadlineState,
  err: unknown,
  latencyMs: number,
): ForwardOutcome {
  if (i.clientGone()) return { kind: "client-gone", answered: false, ttfbMs: 0, latencyMs };
  const detail = { provider: i.provider };
  if (deadline.aborted) {
    const message = `provider ${i.provider} did not answer within ${i.timeoutMs} ms`;
    const error = new KubemootError(ErrorCode.Timeout, message, { detail });
    return { kind: "failed", error, providerFault: true, latencyMs };
  }
  if (i.signal.aborted) {
    const error = new KubemootError(ErrorCode.ShuttingDown, "the sidecar is shutting down", { detail });
    return { kind: "failed", error, providerFault: false, latencyMs };
  }
  const code = errCode(err);
  const why = code && REFUSED.has(code) ? `connection refused (${code})` : describe(err);
  const message = `provider ${i.provider} at ${new URL(i.endpoint).origin}: ${why}`;
  return {
    kind: "failed",
    error: new KubemootError(ErrorCode.ProviderFailure, message, { detail }),
    providerFault: true,
    latencyMs,
    unreachable: unreachableError(err),
  };
}
