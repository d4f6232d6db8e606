// Small HTTP helpers of the emulator: bounded body reading, JSON answers (src/net's), typed HTTP
// errors.
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendJson } from "../net/index.js";

/** An error that becomes an HTTP answer `{"error": message}` with `status`. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads a request body of at most `maxBytes`. A larger body is read to its end and dropped
 * (so the client gets the answer rather than a reset while still sending), then rejected;
 * past 64 × maxBytes the connection is cut.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
        if (size > maxBytes * 64) {
          req.destroy();
          reject(new HttpError(400, `request body too large: the limit is ${maxBytes} bytes`));
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (tooLarge) reject(new HttpError(400, `request body too large: the limit is ${maxBytes} bytes`));
      else resolve(Buffer.concat(chunks));
    });
    req.on("error", (err) => reject(new HttpError(400, `reading the request body: ${err.message}`)));
    req.on("aborted", () => reject(new HttpError(400, "request aborted")));
  });
}

/** Parses a JSON body the way Ollama's handlers do: empty → "missing request body". */
export function parseJsonBody(buf: Buffer, goType: string): Record<string, unknown> {
  const text = buf.toString("utf8");
  if (text.trim() === "") throw new HttpError(400, "missing request body");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `invalid JSON in request body: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, `json: cannot unmarshal ${goKind(value)} into Go value of type ${goType}`);
  }
  return value as Record<string, unknown>;
}

/** Go's name for a JSON value's kind, as encoding/json reports it. */
export function goKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "boolean") return "bool";
  return typeof v;
}

export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}

export const NS_PER_MS = 1e6;

export function toNs(ms: number): number {
  return Math.round(ms * NS_PER_MS);
}
