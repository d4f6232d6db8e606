// The proxied call's spans (docs/tracing.md "The proxied call"): a SERVER span per call, named
// `{gen_ai.operation.name} {gen_ai.request.model}`, continuing the caller's W3C context, with the
// GenAI attributes at its end; and a CLIENT span per request to an engine, its child, whose
// context the engine receives in `traceparent`. Prompts and completions are never recorded.
import type { IncomingMessage } from "node:http";
import { type Context, context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { ATTR, contextFromHeaders, EVENT, tracer } from "../../src/tracing/index.js";
import type { ForwardOutcome } from "./call-context.js";
import type { CallRecord } from "./options.js";
import type { Api } from "./validate.js";

/** gen_ai.operation.name per proxied API. */
export const OPERATION: Record<Api, string> = {
  chat: "chat",
  generate: "text_completion",
  openai: "chat",
  completions: "text_completion",
  responses: "chat",
  embed: "embeddings",
  embeddings: "embeddings",
  "openai-embed": "embeddings",
};

export interface CallSpan {
  span: Span;
  /** The context the call's stages run in: the span over the caller's context. */
  ctx: Context;
}

/** Starts the call's span under the context the request's headers carry. */
export function startCallSpan(req: IncomingMessage, api: Api): CallSpan {
  const parent = contextFromHeaders(req.headers);
  const span = tracer().startSpan(
    OPERATION[api],
    { kind: SpanKind.SERVER, attributes: { [ATTR.genAiOperation]: OPERATION[api] } },
    parent,
  );
  return { span, ctx: trace.setSpan(parent, span) };
}

/** The call's attributes from what it did, then the end of its span. */
export function endCallSpan(span: Span, r: CallRecord, finishReason: string | undefined): void {
  if (span.isRecording()) {
    const op = OPERATION[r.api];
    if (r.requestedModel) span.updateName(`${op} ${r.requestedModel}`);
    span.setAttributes({
      // A call never placed reached no provider: the conventions' value for none known.
      [ATTR.genAiProvider]: r.model !== "" ? r.engine : "_OTHER",
      [ATTR.genAiStream]: r.stream,
      ...(r.requestedModel ? { [ATTR.genAiRequestModel]: r.requestedModel } : {}),
      ...(r.model ? { [ATTR.genAiResponseModel]: r.model } : {}),
      ...(r.promptTokens > 0 ? { [ATTR.genAiInputTokens]: r.promptTokens } : {}),
      ...(r.outputTokens > 0 ? { [ATTR.genAiOutputTokens]: r.outputTokens } : {}),
      ...(r.cachedPromptTokens > 0 ? { [ATTR.genAiCacheReadTokens]: r.cachedPromptTokens } : {}),
      ...(finishReason ? { [ATTR.genAiFinishReasons]: [finishReason] } : {}),
      ...(r.ttfbMs > 0 ? { [ATTR.ttftS]: r.ttfbMs / 1000 } : {}),
      ...(r.ticketId ? { [ATTR.placeTicket]: r.ticketId } : {}),
      ...(r.provider ? { [ATTR.placeProvider]: r.provider } : {}),
    });
    // A client that went away ended the operation unfinished: a failure, of its own kind.
    if (r.status >= 400 || r.reason === "stream-error" || r.reason === "client-gone") {
      span.setAttribute(ATTR.errorType, r.reason ?? String(r.status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}

/** A CLIENT span for the request to the engine at `url`, child of the active (call) span. */
export function startEngineSpan(url: URL): { span: Span; ctx: Context } {
  const span = tracer().startSpan("POST", {
    kind: SpanKind.CLIENT,
    attributes: {
      [ATTR.httpMethod]: "POST",
      [ATTR.serverAddress]: url.hostname,
      [ATTR.serverPort]: Number(url.port) || (url.protocol === "https:" ? 443 : 80),
      // Origin and path only: a query or credentials never reach a span.
      [ATTR.urlFull]: `${url.origin}${url.pathname}`,
    },
  });
  return { span, ctx: trace.setSpan(context.active(), span) };
}

/** Ends the engine's span with how the request went; marks time to first token on the call's span. */
export function endEngineSpan(span: Span, status: number, outcome: ForwardOutcome): void {
  if (span.isRecording()) {
    if (status > 0) span.setAttribute(ATTR.httpStatus, status);
    if (outcome.kind === "failed" || outcome.kind === "broken") {
      span.setAttribute(ATTR.errorType, status >= 400 ? String(status) : outcome.kind);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
  const call = trace.getActiveSpan();
  if (call?.isRecording() && outcome.kind !== "failed" && outcome.ttfbMs > 0) {
    const at = Date.now() - Math.max(0, outcome.latencyMs - outcome.ttfbMs);
    call.addEvent(EVENT.firstChunk, { [ATTR.ttftS]: outcome.ttfbMs / 1000 }, at);
  }
}
