// Whole HTTP answers, written once for every server of the project (the sidecar's proxy, the
// emulator, the real llama.cpp engine): a body with its length, and nothing at all once an
// answer has begun or the connection is gone (a streamed answer's late error only ends it).
import type { ServerResponse } from "node:http";

/** Writes `text` with its content type and length; headers given win over the defaults. */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  type = "text/plain; charset=utf-8",
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.writeHead(status, {
    "content-type": type,
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Writes a JSON body with its length; headers given win over the defaults. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendText(res, status, JSON.stringify(body), "application/json; charset=utf-8", headers);
}
