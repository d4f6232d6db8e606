// Reading a request body with a size cap. An oversized body is refused at once (413, when its
// declared length is over the limit, before a byte of it is read) and the rest of it is read and
// discarded, so that the client gets to read the answer instead of a reset connection; once it
// has ended, the server closes the connection (server.ts). Past a hard limit the connection is
// cut instead.
import type { IncomingMessage } from "node:http";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import { SETTINGS } from "../../src/settings/index.js";
import { badRequest } from "./http-errors.js";

/** The most of an oversized body discarded before the connection is cut (bytes). */
export const DISCARD_MAX_BYTES = 256 * 1024 * 1024;

/** Requests whose oversized body is being discarded: true once it ended, false when cut. */
const discarding = new WeakMap<IncomingMessage, Promise<boolean>>();

/** How the discarding of an oversized body ends (undefined: the body was not oversized). */
export function oversizedBodyDone(req: IncomingMessage): Promise<boolean> | undefined {
  return discarding.get(req);
}

export function bodyTooLarge(maxBytes: number): KubemootError {
  return new KubemootError(
    ErrorCode.TooLarge,
    `request body larger than ${maxBytes} bytes (the proxy's limit, ${SETTINGS.proxyMaxBodyBytes.name})`,
    { reason: "body-too-large", detail: { limit_bytes: maxBytes } },
  );
}

function discardRest(req: IncomingMessage, already: number, maxBytes: number): Promise<boolean> {
  return new Promise((resolve) => {
    let size = already;
    const cap = Math.max(DISCARD_MAX_BYTES, 8 * maxBytes);
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) {
        req.destroy();
        resolve(false);
      }
    });
    req.once("end", () => resolve(true));
    req.once("error", () => resolve(false));
    req.once("close", () => resolve(req.complete));
    req.resume();
  });
}

/** Reads the whole body; rejects with body-too-large (TooLarge) when it exceeds `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    discarding.set(req, discardRest(req, 0, maxBytes));
    return Promise.reject(bodyTooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        chunks.length = 0;
        discarding.set(req, discardRest(req, size, maxBytes));
        reject(bodyTooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(badRequest(`reading the request body failed: ${err.message}`));
    };
    const onAborted = () => {
      cleanup();
      reject(badRequest("the client went away while sending the body"));
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
