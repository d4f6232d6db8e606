// The proxy's HTTP error answers: a KubemootError goes out as the wire table says
// (src/errors/wire.ts): Ollama routes `{"error": "...", "reason": "...", ...}`, OpenAI routes
// (/v1/*) `{"error": {"message", "type", "param", "code", ...}}`, the reason in
// X-Kubemoot-Reason (README.md in this folder, "Errors").
import type { ServerResponse } from "node:http";
import { ErrorCode, type ErrorShape, httpAnswer, KubemootError } from "../../src/errors/index.js";
import { sendJson } from "../../src/net/index.js";

/** A bad value in the request (400 bad-request), naming its field when there is one. */
export function badRequest(message: string, field?: string): KubemootError {
  return field === undefined
    ? new KubemootError(ErrorCode.InvalidArgument, message)
    : new KubemootError(ErrorCode.InvalidArgument, `${field}: ${message}`, { field });
}

export function shapeOfPath(path: string): ErrorShape {
  return path.startsWith("/v1/") ? "openai" : "ollama";
}

/**
 * Answers an error in the route's shape, with `headers` (attribution) besides the answer's own;
 * returns the status sent. Anything but a KubemootError is a bug: 500 internal.
 */
export function sendError(
  res: ServerResponse,
  err: unknown,
  headers: Record<string, string> = {},
  shape: ErrorShape = shapeOfPath(res.req?.url ?? ""),
): number {
  const a = httpAnswer(KubemootError.from(err), shape);
  sendJson(res, a.status, a.body, { ...headers, ...a.headers });
  return a.status;
}
