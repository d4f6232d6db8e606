// A streamed answer, moved to the client unit by unit (NDJSON lines, SSE events) with
// backpressure. Once a byte went out the status is sent, so a failure (connection cut, timeout,
// an answer that ends without its final chunk) ends the stream with one error unit on a unit
// boundary: NDJSON `{"error": "..."}` or SSE `data: {"error": {...}}`. The provider's own error
// unit passes through.
import type { ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { AnswerReader, ForwardInput } from "./call-context.js";
import { type FrameTap, ndjsonTap, sseTap } from "./framing.js";
import { describe, unreachableError } from "./upstream-errors.js";
import { type Api, OPENAI_APIS } from "./validate.js";

type Body = Dispatcher.ResponseData["body"];

/**
 * Moves the provider's body to the client through the tap, unit by unit, pausing the provider
 * while the client's socket is full. Event-driven (no promise per chunk): this is the hot path.
 * Rejects when the provider's body fails (aborts included: a client that leaves or the
 * deadline aborts the request, which errors the body).
 */
function pump(body: Body, res: ServerResponse, tap: FrameTap, onBytes: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const onDrain = () => body.resume();
    const cleanup = () => {
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", onError);
      body.off("close", onClose);
      res.off("drain", onDrain);
    };
    const onData = (chunk: Buffer) => {
      const out = tap.push(chunk);
      if (out === undefined) return;
      onBytes();
      if (!res.write(out)) body.pause();
    };
    const onEnd = () => {
      cleanup();
      const rest = tap.end();
      if (rest !== undefined && rest.length > 0) {
        onBytes();
        res.write(rest);
      }
      resolve();
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () =>
      onError(new KubemootError(ErrorCode.ProviderFailure, "the answer's connection closed before its end"));
    body.on("data", onData);
    body.once("end", onEnd);
    body.once("error", onError);
    body.once("close", onClose);
    res.on("drain", onDrain);
  });
}

/** The error unit that ends a broken stream (on a unit boundary). */
export function errorUnit(api: Api, message: string, clean: boolean): string {
  if (OPENAI_APIS.has(api)) {
    const ev = `data: ${JSON.stringify({ error: { message, type: "api_error", reason: "provider-failure" } })}\n\n`;
    return clean ? ev : `\n\n${ev}`;
  }
  const line = `${JSON.stringify({ error: message, reason: "provider-failure" })}\n`;
  return clean ? line : `\n${line}`;
}

function tapFor(i: ForwardInput): FrameTap {
  if (i.translation) return i.translation.streamTap();
  return OPENAI_APIS.has(i.api) ? sseTap(i.hideUsage) : ndjsonTap();
}

/** Streams the answer; the headers go out with the first unit (as Ollama's do), then whole units. */
export const streamedAnswer: AnswerReader = async (i, { statusCode, headers, body }, started, deadline) => {
  const since = () => performance.now() - started;
  const res = i.res;
  res.writeHead(statusCode, {
    // A translated stream is rebuilt as Ollama's NDJSON.
    "content-type": i.translation
      ? "application/x-ndjson"
      : String(headers["content-type"] ?? "application/x-ndjson"),
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
    ...i.headers,
  });
  const tap = tapFor(i);
  let ttfbMs = 0;
  try {
    await pump(body, res, tap, () => {
      if (ttfbMs === 0) ttfbMs = since();
    });
  } catch (err) {
    body.destroy();
    if (i.clientGone() || res.destroyed) {
      return { kind: "client-gone", answered: true, ttfbMs, latencyMs: since() };
    }
    const message = deadline.aborted
      ? `provider ${i.provider} did not finish within ${i.timeoutMs} ms`
      : i.signal.aborted
        ? "the sidecar is shutting down"
        : `provider ${i.provider} broke off the answer: ${describe(err)}`;
    res.end(errorUnit(i.api, message, tap.clean));
    const unreachable = !deadline.aborted && !i.signal.aborted && unreachableError(err);
    return { kind: "broken", message, report: tap.report(), ttfbMs, latencyMs: since(), unreachable };
  }
  const report = tap.report();
  if (report.error !== undefined) {
    // The provider ended its answer with its own error unit (already forwarded).
    res.end();
    return { kind: "broken", message: report.error, report, ttfbMs, latencyMs: since() };
  }
  if (!report.done) {
    const message = `provider ${i.provider} ended the answer before its final chunk`;
    res.end(errorUnit(i.api, message, true));
    return { kind: "broken", message, report, ttfbMs, latencyMs: since() };
  }
  res.end();
  return { kind: "ok", report, ttfbMs, latencyMs: since(), status: statusCode };
};
