// The forward stage of a placed call: the body rewritten for the placed model, sent once to the
// provider over undici, and its answer brought back, buffered (forward-buffered.ts) or streamed
// (forward-stream.ts). One attempt, no retries: once a byte went to the client the call is the
// provider's answer or an error unit at its end, never a second provider's. A failure before any
// byte becomes an error of the wire table (upstream-errors.ts says which), answered here.
import { context } from "@opentelemetry/api";
import type { Dispatcher } from "undici";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import { withTraceHeaders } from "../../src/tracing/index.js";
import type { DeadlineState, ForwardInput, ForwardOutcome } from "./call-context.js";
import { endEngineSpan, startEngineSpan } from "./call-span.js";
import type { PlacedCall } from "./call-state.js";
import { bufferedAnswer } from "./forward-buffered.js";
import { streamedAnswer } from "./forward-stream.js";
import { loadAnswer } from "./own-answers.js";
import { requestFailure, statusError } from "./upstream-errors.js";
import { PATHS } from "./upstream-routes.js";
import { OPENAI_APIS } from "./validate.js";

const ERROR_BODY_LIMIT = 64 * 1024;

/** The forward's deadline: a cleared timer (not AbortSignal.timeout, which lingers). */
class Deadline implements DeadlineState {
  aborted = false;
  readonly ctl = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = () => this.ctl.abort(this.outer.reason);

  constructor(
    private readonly outer: AbortSignal,
    timeoutMs: number,
  ) {
    if (outer.aborted) this.ctl.abort(outer.reason);
    else outer.addEventListener("abort", this.onAbort, { once: true });
    this.timer = setTimeout(() => {
      this.aborted = true;
      this.ctl.abort(new KubemootError(ErrorCode.Timeout, `no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.outer.removeEventListener("abort", this.onAbort);
  }
}

/** Rewrites the body for the placement and says how it goes out. */
function forwardInput(p: PlacedCall): ForwardInput {
  const { call, request, placement, translation } = p;
  const { settings } = call.ctx;
  request.body.model = placement.model;
  let hideUsage = false;
  if (
    (request.api === "openai" || request.api === "completions") &&
    request.stream &&
    !request.includeUsage
  ) {
    // Ask for the usage chunk (the engine's prompt count) and keep it from the caller.
    const so = request.body.stream_options;
    request.body.stream_options = {
      ...(typeof so === "object" && so !== null ? so : {}),
      include_usage: true,
    };
    hideUsage = true;
  }
  return {
    dispatcher: call.ctx.dispatcher,
    api: request.api,
    ...(translation ? { translation } : {}),
    endpoint: placement.endpoint,
    provider: placement.provider || placement.endpoint,
    model: placement.model,
    body: JSON.stringify(translation ? translation.body : request.body),
    stream: request.stream,
    hideUsage,
    res: call.res,
    headers: p.attribution,
    signal: call.signal,
    clientGone: () => call.clientGone,
    timeoutMs: settings.timeoutMs,
    retryAfterS: settings.retryAfterS,
  };
}

/**
 * Forwards the call and answers how it ended; "retry" when the provider could not be reached
 * before any answer and the call may be placed again (nothing was sent then).
 */
export async function forwardCall(p: PlacedCall, mayRetry: boolean): Promise<"done" | "retry"> {
  const call = p.call;
  if (p.translation && p.request.loadOnly) {
    // A fixed-model engine is always loaded: Ollama's load request is answered here.
    call.answer(loadAnswer(p.request), p.attribution);
    return "done";
  }
  const i = forwardInput(p);
  const deadline = new Deadline(i.signal, i.timeoutMs);
  let outcome: ForwardOutcome;
  try {
    outcome = await forwardOnce(i, deadline);
  } finally {
    deadline.stop();
  }
  p.outcome = outcome;
  switch (outcome.kind) {
    case "ok":
      call.status = outcome.status;
      break;
    case "failed":
      if (outcome.unreachable === true && mayRetry && !call.res.headersSent) return "retry";
      call.fail(outcome.error, p.attribution);
      break;
    case "broken":
      call.status = 200;
      call.reason = "stream-error";
      break;
    case "client-gone":
      call.reason = "client-gone";
      break;
  }
  return "done";
}

/** One request to the engine, inside its CLIENT span (call-span.ts), which the engine continues. */
async function forwardOnce(i: ForwardInput, deadline: Deadline): Promise<ForwardOutcome> {
  const base = new URL(i.endpoint);
  const path = `${base.pathname.replace(/\/+$/, "")}${PATHS[i.translation?.target ?? i.api]}`;
  const engine = startEngineSpan(new URL(path, base.origin));
  let status = 0;
  const outcome = await context.with(engine.ctx, () =>
    requestOnce(i, deadline, base.origin, path, (s) => {
      status = s;
    }),
  );
  endEngineSpan(engine.span, status, outcome);
  return outcome;
}

async function requestOnce(
  i: ForwardInput,
  deadline: Deadline,
  origin: string,
  path: string,
  onStatus: (status: number) => void,
): Promise<ForwardOutcome> {
  const started = performance.now();
  const sse = OPENAI_APIS.has(i.translation?.target ?? i.api);
  let data: Dispatcher.ResponseData;
  try {
    data = await i.dispatcher.request({
      origin,
      path,
      method: "POST",
      headers: withTraceHeaders({
        "content-type": "application/json",
        accept: i.stream ? (sse ? "text/event-stream" : "application/x-ndjson") : "application/json",
      }),
      body: i.body,
      signal: deadline.ctl.signal,
      headersTimeout: i.timeoutMs,
      bodyTimeout: i.timeoutMs,
    });
  } catch (err) {
    return requestFailure(i, deadline, err, performance.now() - started);
  }
  const { statusCode, body } = data;
  onStatus(statusCode);
  if (statusCode >= 400) {
    let text = "";
    try {
      text = (await readCapped(body, ERROR_BODY_LIMIT)).toString("utf8");
    } catch {
      // the status says enough
    }
    body.destroy();
    const { error, providerFault } = statusError(i, statusCode, text);
    return { kind: "failed", error, providerFault, latencyMs: performance.now() - started };
  }
  return i.stream ? streamedAnswer(i, data, started, deadline) : bufferedAnswer(i, data, started, deadline);
}

/** At most `limit` bytes of an error answer's body. */
async function readCapped(body: AsyncIterable<Buffer>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
