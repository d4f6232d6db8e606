// The proxy's HTTP errors, in each API's own shape: Ollama routes answer
// `{"error": "...", "reason": "...", ...}`; OpenAI routes (/v1/*) answer
// `{"error": {"message", "type", "param", "code", ...}}` with the statuses the OpenAI SDKs map to
// typed errors. Both carry the reason in `X-Kubemoot-Reason` (README.md in this folder).
import type { ServerResponse } from "node:http";

export type ProxyReason =
  | "bad-request"
  | "body-too-large"
  | "forbidden"
  | "not-found"
  | "route-not-served"
  | "managed-by-operator"
  | "model-not-found"
  | "prompt-too-large"
  | "model-too-large"
  | "gpu-busy"
  | "provider-unavailable"
  | "provider-busy"
  | "provider-failure"
  | "timeout"
  | "shutting-down"
  | "state-unavailable"
  | "internal";

/** A failure the proxy answers itself, before any byte of an answer was sent. */
export class ProxyError extends Error {
  override readonly name = "ProxyError";

  constructor(
    readonly status: number,
    readonly reason: ProxyReason,
    message: string,
    /** Extra JSON fields (snake_case, e.g. largest_context). */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function badRequest(message: string, field?: string): ProxyError {
  return new ProxyError(400, "bad-request", field ? `${field}: ${message}` : message, field ? { field } : {});
}

/** Writes a JSON body with its length; headers given win over the defaults. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) {
    if (!res.writableEnded) res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Which API's error shape a route answers in. */
export type ErrorShape = "ollama" | "openai";

export function shapeOfPath(path: string): ErrorShape {
  return path.startsWith("/v1/") ? "openai" : "ollama";
}

/** OpenAI error codes the SDKs and agent frameworks test for; other reasons keep their name. */
const OPENAI_CODES: Partial<Record<ProxyReason, string>> = {
  "prompt-too-large": "context_length_exceeded",
  "model-not-found": "model_not_found",
  "body-too-large": "request_too_large",
};

/**
 * The status and body of an error on an OpenAI route. A prompt too large is the caller's
 * request (400 context_length_exceeded, as OpenAI answers it), not 413, which the SDKs do not
 * type; everything else keeps its status.
 */
export function openaiError(err: ProxyError): { status: number; body: unknown } {
  const status = err.reason === "prompt-too-large" ? 400 : err.status;
  const type =
    status === 429
      ? "rate_limit_error"
      : status === 403
        ? "permission_error"
        : status >= 500
          ? "server_error"
          : "invalid_request_error";
  const field = err.extra.field;
  return {
    status,
    body: {
      error: {
        message: err.message,
        type,
        param: typeof field === "string" ? field : null,
        code: OPENAI_CODES[err.reason] ?? err.reason.replaceAll("-", "_"),
        reason: err.reason,
        ...err.extra,
      },
    },
  };
}

/**
 * Sends a ProxyError in the route's shape: Ollama `{"error", "reason", ...extra}`, or OpenAI
 * `{"error": {"message", "type", "param", "code", ...}}`; the reason also in X-Kubemoot-Reason.
 */
export function sendProxyError(
  res: ServerResponse,
  err: ProxyError,
  headers: Record<string, string> = {},
  shape: ErrorShape = shapeOfPath(res.req?.url ?? ""),
): void {
  const all = { ...headers, ...err.headers, "x-kubemoot-reason": err.reason };
  if (shape === "openai") {
    const o = openaiError(err);
    sendJson(res, o.status, o.body, all);
    return;
  }
  sendJson(res, err.status, { error: err.message, reason: err.reason, ...err.extra }, all);
}
