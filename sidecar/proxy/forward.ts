// Forwarding one placed call to its provider over undici, and streaming the answer back chunk
// by chunk with backpressure. One attempt, no retries: once a byte went to the client the call
// is the provider's answer or an error unit at its end, never a second provider's.
//
// Before any byte was sent, failures come back as a ProxyError (the caller answers it):
//   connection refused / reset, 5xx, 404 from the provider → 502 provider-failure;
//   429 / 503 from the provider (its own queue is full)    → 503 provider-busy + Retry-After;
//   400 / 413 / 422 from the provider                       → 400 bad-request (the caller's body);
//   no answer within the timeout                            → 504 timeout.
// After streaming began, a failure (connection cut, timeout, an answer that ends without its
// final chunk) ends the stream with one error unit: NDJSON `{"error": "..."}` or SSE
// `data: {"error": {...}}`, on a unit boundary. The provider's own error unit passes through.
import type { ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import { readAnswer } from "./answer-tail.js";
import {
  type FrameTap,
  ndjsonTap,
  ollamaReport,
  openaiReport,
  type StreamReport,
  sseTap,
} from "./framing.js";
import { ProxyError } from "./http-errors.js";
import type { Translation } from "./translate/index.js";
import { PATHS, routeNotServed } from "./upstream-routes.js";
import { type Api, EMBED_APIS, OPENAI_APIS } from "./validate.js";

const ERROR_BODY_LIMIT = 64 * 1024;
/** Non-streamed answers are buffered (so that a failure can still be a clean 502) up to this. */
const MAX_BUFFERED_ANSWER = 64 * 1024 * 1024;

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

export interface ForwardInput {
  dispatcher: Dispatcher;
  api: Api;
  /** An Ollama-API call sent to an engine's OpenAI route, and its answer brought back. */
  translation?: Translation;
  endpoint: string;
  provider: string;
  model: string;
  body: string;
  stream: boolean;
  /** SSE: drop the usage chunk the proxy requested on the caller's behalf. */
  hideUsage: boolean;
  res: ServerResponse;
  /** Attribution headers for the answer. */
  headers: Record<string, string>;
  /** Client gone, or shutdown. */
  signal: AbortSignal;
  /** The client went away (to tell it from a timeout or shutdown). */
  clientGone: () => boolean;
  timeoutMs: number;
  retryAfterS: number;
}

export type ForwardOutcome =
  /** The whole answer went to the client. */
  | { kind: "ok"; report: StreamReport; ttfbMs: number; latencyMs: number; status: number }
  /** The provider failed before anything was sent; nothing was written to the client. */
  | { kind: "failed"; error: ProxyError; providerFault: boolean; latencyMs: number; unreachable?: boolean }
  /** The stream began and then failed; the client got an error unit at its end. */
  | {
      kind: "broken";
      message: string;
      report: StreamReport;
      ttfbMs: number;
      latencyMs: number;
      unreachable?: boolean;
    }
  /**
   * The client went away; the upstream request was aborted. `answered`: the provider had begun
   * its answer (so the model was there and working).
   */
  | { kind: "client-gone"; answered: boolean; ttfbMs: number; latencyMs: number };

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

function describe(err: unknown): string {
  const code = errCode(err);
  const msg = err instanceof Error ? err.message : String(err);
  return code && !msg.includes(code) ? `${msg} (${code})` : msg;
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

async function readCapped(
  body: AsyncIterable<Buffer>,
  limit: number,
): Promise<{ buf: Buffer; over: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) return { buf: Buffer.concat(chunks), over: true };
    chunks.push(chunk);
  }
  return { buf: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size), over: false };
}

function statusError(
  i: ForwardInput,
  status: number,
  text: string,
): { error: ProxyError; providerFault: boolean } {
  const msg = upstreamMessage(text);
  const extra = { provider: i.provider, upstream_status: status };
  if (routeNotServed(status, text)) {
    // The provider is fine; it just does not serve this API (e.g. an older engine).
    return {
      error: new ProxyError(
        404,
        "route-not-served",
        `provider ${i.provider} does not serve ${PATHS[i.translation?.target ?? i.api]} (it answered ${status}: ${msg})`,
        extra,
      ),
      providerFault: false,
    };
  }
  // 501: the engine cannot do this with this model (e.g. embeddings from a chat model).
  if (status === 400 || status === 413 || status === 422 || status === 501) {
    return {
      error: new ProxyError(400, "bad-request", `the provider rejected the request: ${msg}`, extra),
      providerFault: false,
    };
  }
  if (status === 429 || status === 503) {
    return {
      error: new ProxyError(503, "provider-busy", `provider ${i.provider} is busy: ${msg}`, extra, {
        "retry-after": String(i.retryAfterS),
      }),
      providerFault: true,
    };
  }
  const what =
    status === 404
      ? `provider ${i.provider} does not have model ${i.model}`
      : `provider ${i.provider} failed`;
  return { error: new ProxyError(502, "provider-failure", `${what}: ${msg}`, extra), providerFault: true };
}

/**
 * Moves the provider's body to the client through the tap, unit by unit, pausing the provider
 * while the client's socket is full. Event-driven (no promise per chunk): this is the hot path.
 * Rejects when the provider's body fails (aborts included: a client that leaves or the
 * deadline aborts the request, which errors the body).
 */
function pump(
  body: Dispatcher.ResponseData["body"],
  res: ServerResponse,
  tap: FrameTap,
  onBytes: () => void,
): Promise<void> {
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
    const onClose = () => onError(new Error("the answer's connection closed before its end"));
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

/** Forwards one call; the deadline is a cleared timer (not AbortSignal.timeout, which lingers). */
export async function forward(i: ForwardInput): Promise<ForwardOutcome> {
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(i.signal.reason);
  if (i.signal.aborted) ctl.abort(i.signal.reason);
  else i.signal.addEventListener("abort", onAbort, { once: true });
  const deadline = { aborted: false };
  const timer = setTimeout(() => {
    deadline.aborted = true;
    ctl.abort(new Error(`no answer within ${i.timeoutMs} ms`));
  }, i.timeoutMs);
  try {
    return await forwardOnce(i, ctl.signal, deadline);
  } finally {
    clearTimeout(timer);
    i.signal.removeEventListener("abort", onAbort);
  }
}

async function forwardOnce(
  i: ForwardInput,
  signal: AbortSignal,
  deadline: { readonly aborted: boolean },
): Promise<ForwardOutcome> {
  const started = performance.now();
  const since = () => performance.now() - started;
  const base = new URL(i.endpoint);
  const prefix = base.pathname.replace(/\/+$/, "");
  const upstream = i.translation?.target ?? i.api;
  let data: Dispatcher.ResponseData;
  try {
    data = await i.dispatcher.request({
      origin: base.origin,
      path: `${prefix}${PATHS[upstream]}`,
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: i.stream
          ? OPENAI_APIS.has(upstream)
            ? "text/event-stream"
            : "application/x-ndjson"
          : "application/json",
      },
      body: i.body,
      signal,
      headersTimeout: i.timeoutMs,
      bodyTimeout: i.timeoutMs,
    });
  } catch (err) {
    if (i.clientGone()) return { kind: "client-gone", answered: false, ttfbMs: 0, latencyMs: since() };
    const extra = { provider: i.provider };
    if (deadline.aborted) {
      return {
        kind: "failed",
        error: new ProxyError(
          504,
          "timeout",
          `provider ${i.provider} did not answer within ${i.timeoutMs} ms`,
          extra,
        ),
        providerFault: true,
        latencyMs: since(),
      };
    }
    if (i.signal.aborted) {
      return {
        kind: "failed",
        error: new ProxyError(503, "shutting-down", "the sidecar is shutting down", extra),
        providerFault: false,
        latencyMs: since(),
      };
    }
    const code = errCode(err);
    const why = code && REFUSED.has(code) ? `connection refused (${code})` : describe(err);
    return {
      kind: "failed",
      error: new ProxyError(
        502,
        "provider-failure",
        `provider ${i.provider} at ${base.origin}: ${why}`,
        extra,
      ),
      providerFault: true,
      latencyMs: since(),
      unreachable: unreachableError(err),
    };
  }

  const { statusCode, body } = data;
  const contentType = i.translation
    ? i.stream
      ? "application/x-ndjson"
      : "application/json; charset=utf-8"
    : String(data.headers["content-type"] ?? (i.stream ? "application/x-ndjson" : "application/json"));

  if (statusCode >= 400) {
    let text = "";
    try {
      text = (await readCapped(body, ERROR_BODY_LIMIT)).buf.toString("utf8");
    } catch {
      // the status says enough
    }
    body.destroy();
    const { error, providerFault } = statusError(i, statusCode, text);
    return { kind: "failed", error, providerFault, latencyMs: since() };
  }

  if (!i.stream) return bufferedAnswer(i, body, statusCode, contentType, started, deadline);

  // Streaming: the headers go out with the first unit (as Ollama's do), then whole units.
  const res = i.res;
  res.writeHead(statusCode, {
    "content-type": contentType,
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
    ...i.headers,
  });
  const tap: FrameTap = i.translation
    ? i.translation.streamTap()
    : OPENAI_APIS.has(i.api)
      ? sseTap(i.hideUsage)
      : ndjsonTap();
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
    return {
      kind: "broken",
      message,
      report: tap.report(),
      ttfbMs,
      latencyMs: since(),
      unreachable: !deadline.aborted && !i.signal.aborted && unreachableError(err),
    };
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
}

async function bufferedAnswer(
  i: ForwardInput,
  body: Dispatcher.ResponseData["body"],
  statusCode: number,
  contentType: string,
  started: number,
  deadline: { readonly aborted: boolean },
): Promise<ForwardOutcome> {
  const since = () => performance.now() - started;
  let buf: Buffer;
  let ttfbMs = 0;
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (ttfbMs === 0) ttfbMs = since();
      size += chunk.length;
      if (size > MAX_BUFFERED_ANSWER) {
        body.destroy();
        return {
          kind: "failed",
          error: new ProxyError(
            502,
            "provider-failure",
            `provider ${i.provider} sent an answer over ${MAX_BUFFERED_ANSWER} bytes`,
          ),
          providerFault: true,
          latencyMs: since(),
        };
      }
      chunks.push(chunk);
    }
    buf = Buffer.concat(chunks, size);
  } catch (err) {
    body.destroy();
    if (i.clientGone()) return { kind: "client-gone", answered: true, ttfbMs, latencyMs: since() };
    const timedOut = deadline.aborted;
    return {
      kind: "failed",
      error: timedOut
        ? new ProxyError(504, "timeout", `provider ${i.provider} did not finish within ${i.timeoutMs} ms`, {
            provider: i.provider,
          })
        : new ProxyError(
            502,
            "provider-failure",
            `provider ${i.provider} broke off the answer: ${describe(err)}`,
            {
              provider: i.provider,
            },
          ),
      providerFault: !i.signal.aborted || timedOut,
      latencyMs: since(),
    };
  }
  // A translated answer is rebuilt from its vectors, so only one passed on as is skips them.
  const obj = readAnswer(buf, EMBED_APIS.has(i.api) && i.translation === undefined);
  if (!obj) {
    return {
      kind: "failed",
      error: new ProxyError(
        502,
        "provider-failure",
        `provider ${i.provider} answered something that is not JSON`,
        {
          provider: i.provider,
        },
      ),
      providerFault: true,
      latencyMs: since(),
    };
  }
  const openai = OPENAI_APIS.has(i.translation?.target ?? i.api);
  const report = openai ? openaiReport(obj) : ollamaReport(obj);
  if (openai) report.done = report.done || Array.isArray(obj.choices);
  if (i.translation) {
    buf = Buffer.from(
      JSON.stringify(report.error !== undefined ? { error: report.error } : i.translation.answer(obj)),
    );
  }
  const res = i.res;
  if (res.destroyed) return { kind: "client-gone", answered: true, ttfbMs, latencyMs: since() };
  res.writeHead(statusCode, {
    "content-type": contentType,
    "content-length": String(buf.length),
    ...i.headers,
  });
  res.end(buf);
  if (report.error !== undefined) {
    return { kind: "broken", message: report.error, report, ttfbMs, latencyMs: since() };
  }
  return { kind: "ok", report, ttfbMs, latencyMs: since(), status: statusCode };
}
