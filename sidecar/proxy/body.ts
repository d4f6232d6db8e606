// Reading a request body with a size cap. An oversized body is read to its end and discarded
// (so the client gets to read our 400 instead of a reset connection), up to a hard limit after
// which the connection is cut.
import type { IncomingMessage } from "node:http";
import { badRequest, ProxyError } from "./http-errors.js";

/** Past this many bytes of an oversized body the connection is destroyed instead of drained. */
const DRAIN_FACTOR = 8;

/** Reads the whole body; throws ProxyError 400 when it exceeds `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    const chunks: Buffer[] = [];
    let size = 0;
    let oversized = Number.isFinite(declared) && declared > maxBytes;
    const tooLarge = () =>
      badRequest(`request body larger than ${maxBytes} bytes (the proxy's maxBodyBytes)`, "body");
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (oversized || size > maxBytes) {
        oversized = true;
        chunks.length = 0;
        if (size > maxBytes * DRAIN_FACTOR) {
          cleanup();
          req.destroy();
          reject(tooLarge());
        }
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (oversized) reject(tooLarge());
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new ProxyError(400, "bad-request", `reading the request body failed: ${err.message}`));
    };
    const onAborted = () => {
      cleanup();
      reject(new ProxyError(400, "bad-request", "the client went away while sending the body"));
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}

/** Parses a body that must be one JSON object. */
export function parseJsonObject(buf: Buffer): Record<string, unknown> {
  if (buf.length === 0) throw badRequest("empty request body; expected a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(buf.toString("utf8"));
  } catch (err) {
    throw badRequest(`invalid JSON in request body: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badRequest(
      `expected a JSON object, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`,
    );
  }
  return value as Record<string, unknown>;
}
