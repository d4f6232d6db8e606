// The state of one proxied call as its stages fill it in (call.ts runs them): `ProxyCall` is the
// whole call, from its request to its log line; `PlacedCall` one placement of it, created by the
// place stage with everything placement decided. Each field says which stage sets it. Errors
// are answered in one place, `ProxyCall.fail`.
import type { IncomingMessage, ServerResponse } from "node:http";
import { isSpanContextValid, type Span, TraceFlags } from "@opentelemetry/api";
import type { Engine, ProviderState } from "../../src/core/index.js";
import type { ErrorShape, KubemootError } from "../../src/errors/index.js";
import { sendJson } from "../../src/net/index.js";
import type { PlacementOut, PromptEstimate } from "../../src/scheduler/index.js";
import type { CallContext, ForwardOutcome } from "./call-context.js";
import { endCallSpan } from "./call-span.js";
import { type ExactHold, engineOf, NO_EXACT_COUNT, translationFor } from "./engine-route.js";
import { sendError } from "./http-errors.js";
import { attributionHeaders } from "./kubemoot-headers.js";
import type { NumCtxDecision } from "./num-ctx.js";
import type { CallRecord } from "./options.js";
import type { Translation } from "./translate/index.js";
import { type Api, type CallRequest, OPENAI_APIS } from "./validate.js";

const NO_ESTIMATE: PromptEstimate = { tokens: 0, generous: 0 };

export class ProxyCall {
  readonly shape: ErrorShape;
  /** Aborted when the client goes away or the proxy shuts down. */
  readonly signal: AbortSignal;
  /** The client went away (told apart from a shutdown). */
  clientGone = false;
  /** The answer's status, and the reason of an error or an unusual end. */
  status = 0;
  reason: CallRecord["reason"];
  /** parse: the request. */
  request: CallRequest | undefined;
  /** place: the prompt's estimate (none for a load request), and the wait for a GPU (ms). */
  estimate: PromptEstimate = NO_ESTIMATE;
  queueWaitMs = 0;
  /** place: the latest placement (a call refused by a provider it could not reach is placed again). */
  placed: PlacedCall | undefined;

  // One controller per call, not AbortSignal.any over the long-lived shutdown signal: that keeps
  // per-call state alive.
  private readonly ended = new AbortController();
  private readonly onClose = () => {
    if (this.res.writableFinished) return;
    this.clientGone = true;
    this.ended.abort();
  };
  private readonly onShutdown = () => this.ended.abort();
  private readonly startedAt = performance.now();

  constructor(
    readonly ctx: CallContext,
    readonly api: Api,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** The call's span (docs/tracing.md), ended with the call. */
    readonly span: Span,
  ) {
    this.shape = OPENAI_APIS.has(api) ? "openai" : "ollama";
    this.signal = this.ended.signal;
    res.on("close", this.onClose);
    if (ctx.shutdown.aborted) this.ended.abort();
    else ctx.shutdown.addEventListener("abort", this.onShutdown, { once: true });
  }

  /** Answers `err` in the route's shape (the wire table's status) with `headers`. */
  fail(err: KubemootError, headers: Record<string, string> = {}): void {
    this.status = sendError(this.res, err, headers, this.shape);
    this.reason = err.reason;
  }

  /** An answer the proxy gives itself. */
  answer(body: unknown, headers: Record<string, string> = {}): void {
    this.status = 200;
    sendJson(this.res, 200, body, headers);
  }

  /** The call is over: listeners off, one log line, the onCall hook. */
  finish(): void {
    this.res.off("close", this.onClose);
    this.ctx.shutdown.removeEventListener("abort", this.onShutdown);
    const { logger, hooks } = this.ctx;
    const r = this.record();
    const level = r.status >= 500 || r.reason === "stream-error" ? "warn" : "info";
    logger[level](
      {
        api: r.api,
        model: r.requestedModel,
        placed_model: r.model || undefined,
        provider: r.provider || undefined,
        ticket: r.ticketId || undefined,
        status: r.status,
        reason: r.reason,
        cold_load: r.coldLoad,
        evicted: r.evicted.length > 0 ? r.evicted : undefined,
        queue_wait_ms: Math.round(r.queueWaitMs),
        latency_ms: Math.round(r.latencyMs),
        duration_ms: Math.round(r.durationMs),
        ttfb_ms: Math.round(r.ttfbMs),
        prompt_tokens_estimated: r.estimatedPromptTokens,
        prompt_tokens_reported: r.promptTokens,
        prompt_tokens_cached: r.cachedPromptTokens || undefined,
        output_tokens: r.outputTokens,
        num_ctx: r.numCtx,
        truncated: r.truncated || undefined,
        engine: r.provider ? r.engine : undefined,
        prompt_tokens_exact: r.exactPromptTokens,
        dropped: r.dropped,
      },
      "proxy call",
    );
    try {
      hooks.onCall?.(r);
    } catch (err) {
      logger.warn({ err }, "proxy: onCall hook failed");
    }
    const o = this.placed?.outcome;
    endCallSpan(
      this.span,
      r,
      o !== undefined && o.kind !== "failed" && "report" in o ? o.report.finishReason : undefined,
    );
  }

  /** What the hooks and the log see of the call. */
  record(): CallRecord {
    const p = this.placed;
    const o = p?.outcome;
    const dropped = p?.translation?.dropped;
    const r: CallRecord = {
      api: this.api,
      requestedModel: this.request?.model ?? "",
      stream: this.request?.stream ?? false,
      status: this.status,
      reason: this.reason,
      ticketId: p?.placement.ticketId ?? "",
      provider: p?.placement.provider ?? "",
      model: p?.placement.model ?? "",
      coldLoad: p?.placement.coldLoad ?? false,
      evicted: p?.placement.evicted ?? [],
      queueWaitMs: this.queueWaitMs,
      latencyMs: o?.latencyMs ?? 0,
      durationMs: performance.now() - this.startedAt,
      ttfbMs: o !== undefined && o.kind !== "failed" ? o.ttfbMs : 0,
      estimatedPromptTokens: this.estimate.tokens,
      promptTokens: p?.promptTokens ?? 0,
      cachedPromptTokens: p?.cachedPromptTokens ?? 0,
      outputTokens: p?.outputTokens ?? 0,
      truncated: p?.truncated ?? false,
      numCtx: p?.numCtx?.kind === "set" || p?.numCtx?.kind === "keep" ? p.numCtx.value : undefined,
      engine: p?.engine ?? "ollama",
    };
    if (p?.exactPromptTokens !== undefined) r.exactPromptTokens = p.exactPromptTokens;
    if (dropped !== undefined && dropped.length > 0) r.dropped = dropped;
    const sc = this.span.spanContext();
    if ((sc.traceFlags & TraceFlags.SAMPLED) !== 0 && isSpanContextValid(sc)) {
      r.traceId = sc.traceId;
      r.spanId = sc.spanId;
    }
    return r;
  }
}

/** One placement of a call: what the place stage decided, and what the later stages add. */
export class PlacedCall {
  /** fit: the engine's exact prompt count, held until the call ends. */
  exact: ExactHold = NO_EXACT_COUNT;
  exactPromptTokens: number | undefined;
  /** fit: the num_ctx decision (Ollama API only). */
  numCtx: NumCtxDecision | undefined;
  /** fit: the call does not fit and was answered without being forwarded. */
  refused: KubemootError | undefined;
  /** forward: how forwarding ended. */
  outcome: ForwardOutcome | undefined;
  /** release: the engine's counts, and whether the scheduler judged the prompt cut. */
  promptTokens = 0;
  cachedPromptTokens = 0;
  outputTokens = 0;
  truncated = false;

  /** The engine serving the placed provider. */
  readonly engine: Engine;
  /** An Ollama-API call on an engine that speaks only OpenAI's API goes across (translate/). */
  readonly translation: Translation | undefined;
  /** The attribution headers of every answer of this placement (errors included). */
  readonly attribution: Record<string, string>;

  constructor(
    readonly call: ProxyCall,
    readonly request: CallRequest,
    readonly placement: PlacementOut,
    /** The placed provider's published state, when the proxy has one. */
    readonly state: ProviderState | undefined,
  ) {
    this.engine = engineOf(state);
    this.translation = translationFor(request, this.engine, placement.model);
    const dropped = this.translation?.dropped;
    this.attribution = attributionHeaders(placement, call.queueWaitMs, this.engine, dropped);
  }
}
