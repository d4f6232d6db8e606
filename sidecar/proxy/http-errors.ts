// The proxy's HTTP errors: one JSON shape on every route, `{"error": "...", "reason": "...", ...}`,
// with the status that names the class of failure (README.md in this folder lists them).
import type { ServerResponse } from "node:http";

export type ProxyReason =
  | "bad-request"
  | "body-too-large"
  | "forbidden"
  | "not-found"
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

/**
 * Sends a ProxyError as `{"error", "reason", ...extra}`; an oversized body on the OpenAI routes
 * as OpenAI's `{"error": {"message", "type", "param", "code"}}`, which OpenAI clients parse.
 */
export function sendProxyError(
  res: ServerResponse,
  err: ProxyError,
  headers: Record<string, string> = {},
): void {
  const openai = err.reason === "body-too-large" && (res.req?.url ?? "").startsWith("/v1/");
  const body = openai
    ? {
        error: {
          message: err.message,
          type: "invalid_request_error",
          param: null,
          code: "request_too_large",
        },
      }
    : { error: err.message, reason: err.reason, ...err.extra };
  sendJson(res, err.status, body, { ...headers, ...err.headers });
}
