// The FAKE API server's answers: JSON bodies and Kubernetes Status objects.
import type { ServerResponse } from "node:http";

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

/** A Kubernetes Status object as the body. */
export function sendStatus(res: ServerResponse, code: number, reason: string, message: string): void {
  sendJson(res, code, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: code < 400 ? "Success" : "Failure",
    message,
    reason,
    code,
  });
}

export function statusReason(code: number): string {
  return (
    { 400: "BadRequest", 404: "NotFound", 409: "AlreadyExists", 415: "UnsupportedMediaType", 422: "Invalid" }[
      code
    ] ?? "InternalError"
  );
}
