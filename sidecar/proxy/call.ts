// One proxied inference call, end to end: read and validate the body, estimate the prompt,
// place (waiting while the GPUs are busy), apply the num_ctx policy, forward to the chosen
// provider with the chosen model, stream the answer back, and release the ticket with the
// outcome in a finally path — whatever happened, the client leaving included.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import { isFixedModelEngine, type ProviderState } from "../../src/core/index.js";
import { normalizeModelName } from "../../src/engines/index.js";
import type { Logger } from "../../src/log/index.js";
import type {
  Acquired,
  PlaceInput,
  PlacementOut,
  PromptEstimate,
  Scheduler,
} from "../../src/scheduler/index.js";
import { parseJsonObject, readBody } from "./body.js";
import { knownModels, providerContext } from "./catalog.js";
import { engineOf, exactPromptCount, fixedContext, translationFor } from "./engine-route.js";
import { type ForwardOutcome, forward } from "./forward.js";
import { openaiError, ProxyError, sendJson, sendProxyError } from "./http-errors.js";
import { embedContext, overlongInput } from "./input-check.js";
import {
  attributionHeaders,
  type CallHeaders,
  callCandidates,
  parseCallHeaders,
} from "./kubemoot-headers.js";
import { applyNumCtx, decideNumCtx, type NumCtxDecision } from "./num-ctx.js";
import type { CallRecord, ProxyHooks, ProxySettings } from "./options.js";
import { refusalError, schedulerError } from "./refusal-errors.js";
import { releaseCall } from "./release.js";
import type { TokenCountCache } from "./tokenize.js";
import {
  type Api,
  type CallRequest,
  OPENAI_APIS,
  parseChat,
  parseGenerate,
  parseOpenAIChat,
} from "./validate.js";
import {
  parseEmbed,
  parseLegacyEmbeddings,
  parseOpenAICompletion,
  parseOpenAIEmbed,
  parseResponses,
} from "./validate-surface.js";

/** Placements a call gets when its provider refuses or resets the connection before answering. */
const UNREACHABLE_ATTEMPTS = 2;

export interface CallContext {
  scheduler: Scheduler;
  settings: ProxySettings;
  dispatcher: Dispatcher;
  providers: (() => ProviderState[] | Promise<ProviderState[]>) | undefined;
  logger: Logger;
  hooks: ProxyHooks;
  /** Aborted when the proxy shuts down (in-flight calls end, their tickets are released). */
  shutdown: AbortSignal;
  /** Engines' exact prompt counts, shared by the calls in flight (tokenize.ts). */
  tokenCounts?: TokenCountCache;
}

const PARSERS: Record<Api, (body: Record<string, unknown>) => CallRequest> = {
  chat: parseChat,
  generate: parseGenerate,
  openai: parseOpenAIChat,
  completions: parseOpenAICompletion,
  responses: parseResponses,
  embed: parseEmbed,
  embeddings: parseLegacyEmbeddings,
  "openai-embed": parseOpenAIEmbed,
};

/** An answer to Ollama's unload request that the proxy gives itself (see README.md). */
function unloadAnswer(call: CallRequest) {
  const base = { model: call.model, created_at: new Date().toISOString() };
  if (call.api === "embed") return { model: call.model, embeddings: [] };
  if (call.api === "embeddings") return { embedding: [] };
  return call.api === "chat"
    ? { ...base, message: { role: "assistant", content: "" }, done_reason: "unload", done: true }
    : { ...base, response: "", done: true, done_reason: "unload" };
}

export async function handleCall(
  ctx: CallContext,
  api: Api,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { scheduler, settings, logger, hooks } = ctx;
  // One signal per call: aborted when the client goes away (`gone`) or the proxy shuts down.
  // (Not AbortSignal.any over the long-lived shutdown signal: that keeps per-call state alive.)
  const gone = new AbortController();
  const ended = new AbortController();
  const signal = ended.signal;
  const onClose = () => {
    if (res.writableFinished) return;
    gone.abort();
    ended.abort();
  };
  const onShutdown = () => ended.abort();
  res.on("close", onClose);
  if (ctx.shutdown.aborted) ended.abort();
  else ctx.shutdown.addEventListener("abort", onShutdown, { once: true });
  const record: CallRecord = {
    api,
    requestedModel: "",
    stream: false,
    status: 0,
    reason: undefined,
    ticketId: "",
    provider: "",
    model: "",
    coldLoad: false,
    evicted: [],
    queueWaitMs: 0,
    latencyMs: 0,
    ttfbMs: 0,
    estimatedPromptTokens: 0,
    promptTokens: 0,
    outputTokens: 0,
    truncated: false,
    numCtx: undefined,
    engine: "ollama",
  };
  const shape = OPENAI_APIS.has(api) ? "openai" : "ollama";
  const fail = (err: ProxyError, headers: Record<string, string> = {}) => {
    // The status on the wire (an OpenAI route answers a prompt too large with 400).
    record.status = shape === "openai" ? openaiError(err).status : err.status;
    record.reason = err.reason;
    sendProxyError(res, err, headers, shape);
  };
  try {
    const call = PARSERS[api](parseJsonObject(await readBody(req, settings.maxBodyBytes)));
    const headers = parseCallHeaders(req.headers);
    record.requestedModel = call.model;
    record.stream = call.stream;
    if (call.unload) {
      // Residency is the scheduler's: a caller's unload would pull a copy from under others.
      record.status = 200;
      sendJson(res, 200, unloadAnswer(call));
      return;
    }
    const states = await readStates(ctx);
    checkKnown(ctx, call.model, headers, states);
    const estimate = call.loadOnly
      ? { tokens: 0, generous: 0 }
      : scheduler.promptEstimate(0, call.promptChars);
    const tokens = estimate.tokens;
    record.estimatedPromptTokens = tokens;
    const input: PlaceInput = {
      agent: headers.agent || settings.agent,
      threadId: headers.threadId,
      phase: headers.phase,
      candidates: callCandidates(
        call.model,
        headers.candidates ?? scheduler.candidatesFor(headers.phase, []),
      ),
      ...(headers.tolerance !== undefined ? { tolerance: headers.tolerance } : {}),
      // The scheduler estimates from the chars (and keeps the generous count for refusals).
      promptTokens: 0,
      promptChars: call.loadOnly ? 0 : call.promptChars,
      maxOutputTokens: call.maxOutputTokens,
      cannotWait: headers.cannotWait,
    };
    // A provider that refuses the connection never saw the call: it is placed once more (the
    // scheduler no longer chooses the unreachable provider), so the client is not the one to
    // find out that a GPU server died.
    for (let attempt = 0; attempt < UNREACHABLE_ATTEMPTS; attempt++) {
      let acquired: Acquired;
      try {
        acquired = await scheduler.acquire(input, signal, settings.waitLimitS);
      } catch (err) {
        throw schedulerError(err);
      }
      if (acquired.kind === "aborted") {
        record.reason = "client-gone";
        record.queueWaitMs = acquired.waitedMs;
        if (!res.writableEnded) {
          if (ctx.shutdown.aborted && !gone.signal.aborted) {
            fail(new ProxyError(503, "shutting-down", "the sidecar is shutting down"));
          } else res.destroy();
        }
        return;
      }
      if (acquired.kind === "refused") {
        record.queueWaitMs = acquired.waitedMs;
        fail(refusalError(acquired.refusal, settings, acquired.waitedMs));
        return;
      }
      const state = states?.find((x) => x.name === acquired.placement.provider);
      const next = await runPlaced(
        ctx,
        call,
        estimate,
        acquired.placement,
        acquired.queueWaitMs,
        state,
        res,
        signal,
        gone,
        record,
        fail,
        attempt + 1 < UNREACHABLE_ATTEMPTS,
      );
      if (next === "done") return;
      logger.warn(
        { provider: acquired.placement.provider },
        "proxy: provider unreachable, placing the call again",
      );
    }
  } catch (err) {
    if (err instanceof ProxyError) fail(err);
    else {
      logger.error({ err, api }, "proxy: unexpected failure");
      fail(schedulerError(err));
    }
  } finally {
    res.off("close", onClose);
    ctx.shutdown.removeEventListener("abort", onShutdown);
    const level = record.status >= 500 || record.reason === "stream-error" ? "warn" : "info";
    logger[level](
      {
        api: record.api,
        model: record.requestedModel,
        placed_model: record.model || undefined,
        provider: record.provider || undefined,
        ticket: record.ticketId || undefined,
        status: record.status,
        reason: record.reason,
        cold_load: record.coldLoad,
        evicted: record.evicted.length > 0 ? record.evicted : undefined,
        queue_wait_ms: Math.round(record.queueWaitMs),
        latency_ms: Math.round(record.latencyMs),
        ttfb_ms: Math.round(record.ttfbMs),
        prompt_tokens_estimated: record.estimatedPromptTokens,
        prompt_tokens_reported: record.promptTokens,
        output_tokens: record.outputTokens,
        num_ctx: record.numCtx,
        truncated: record.truncated || undefined,
        engine: record.provider ? record.engine : undefined,
        prompt_tokens_exact: record.exactPromptTokens,
        dropped: record.dropped,
      },
      "proxy call",
    );
    try {
      hooks.onCall?.(record);
    } catch (err) {
      logger.warn({ err }, "proxy: onCall hook failed");
    }
  }
}

/** The providers' states, or undefined when there is no source or it cannot be read now. */
async function readStates(ctx: CallContext): Promise<ProviderState[] | undefined> {
  if (!ctx.providers) return undefined;
  try {
    const v = ctx.providers();
    // A synchronous source (e.g. the watched copy's peekAll) costs no extra turn of the loop.
    return Array.isArray(v) ? v : await v;
  } catch {
    return undefined; // the scheduler will say what it can
  }
}

/** 404 when no provider has the model and it is no configured or given candidate. */
function checkKnown(
  ctx: CallContext,
  model: string,
  headers: CallHeaders,
  states: ProviderState[] | undefined,
): void {
  if (!states || states.length === 0) return; // no state at all: unknown is not absent
  if (knownModels(states).has(model)) return;
  const cfg = ctx.scheduler.config;
  const listed = [...cfg.candidatesMulling, ...cfg.candidatesTriage, ...(headers.candidates ?? [])];
  if (listed.some((c) => normalizeModelName(c.model) === model)) return;
  throw new ProxyError(404, "model-not-found", `model "${model}" not found, try pulling it first`, { model });
}

async function runPlaced(
  ctx: CallContext,
  call: CallRequest,
  estimate: PromptEstimate,
  p: PlacementOut,
  queueWaitMs: number,
  state: ProviderState | undefined,
  res: ServerResponse,
  signal: AbortSignal,
  gone: AbortController,
  record: CallRecord,
  fail: (err: ProxyError, headers?: Record<string, string>) => void,
  mayRetry: boolean,
): Promise<"done" | "retry"> {
  const { scheduler, settings, logger } = ctx;
  let next: "done" | "retry" = "done";
  const tokens = estimate.tokens;
  // Refusals before sending are decided on the generous count (docs/rules/placement.md §3).
  const generous = estimate.generous;
  Object.assign(record, {
    ticketId: p.ticketId,
    provider: p.provider,
    model: p.model,
    coldLoad: p.coldLoad,
    evicted: p.evicted,
    queueWaitMs,
  });
  const engine = engineOf(state);
  record.engine = engine;
  // An Ollama-API call on an engine that speaks only OpenAI's API goes across (translate/).
  const translation = translationFor(call, engine, p.model);
  if (translation && translation.dropped.length > 0) record.dropped = translation.dropped;
  const attribution = attributionHeaders(p, queueWaitMs, engine, translation?.dropped);
  const exact = exactPromptCount(ctx, state, p.endpoint, p.model, call, translation, signal);
  const renew = p.staticFallback
    ? undefined
    : setInterval(() => {
        scheduler.renew(p.ticketId, scheduler.config.leaseS).catch((err) => {
          logger.warn({ err, ticket: p.ticketId }, "proxy: renewing the ticket failed");
        });
      }, settings.renewEveryMs);
  renew?.unref();
  let outcome: ForwardOutcome | undefined;
  let refused: ProxyError | undefined;
  let numCtx: NumCtxDecision | undefined;
  try {
    // No num_ctx on the OpenAI API, nor on an engine translated to it: it runs at its own context.
    const openai = OPENAI_APIS.has(call.api) || translation !== undefined;
    refused = overlongInput(
      call,
      embedContext(
        call.inputChars ? await readStates(ctx) : undefined,
        p.model,
        openai
          ? fixedContext(state, p.model, p.contextLength)
          : p.contextLength || providerContext(state, p.model),
      ),
      (chars) => scheduler.promptEstimate(0, chars).generous,
      p,
    );
    if (refused) {
      // an over-long embedding input, refused by name
    } else if (openai) {
      // The engine's exact count when it has a tokenizer route, else the generous estimate.
      const counted = await exact.count;
      if (counted) record.exactPromptTokens = counted.tokens;
      const ctxLen = counted?.limit || fixedContext(state, p.model, p.contextLength);
      const need = counted?.tokens ?? generous;
      if (ctxLen > 0 && need > ctxLen) {
        const size = counted ? `${need} tokens, counted by the engine` : `at least about ${need} tokens`;
        refused = new ProxyError(
          413,
          "prompt-too-large",
          translation || isFixedModelEngine(engine)
            ? `The prompt (${size}) does not fit the ${ctxLen}-token context of ${p.model} on ${p.provider} (engine ${engine}); send less.`
            : `The prompt (${size}) does not fit the ${ctxLen}-token context that ${p.model} gets on ${p.provider} through the OpenAI API (which cannot set num_ctx); use /api/chat, raise the provider's per-request context, or send less.`,
          { model: p.model, largest_context: ctxLen, prompt_tokens: need },
        );
      }
    } else {
      numCtx = decideNumCtx({
        policy: settings.numCtxPolicy,
        callerNumCtx: call.numCtx,
        contextLength: p.contextLength || providerContext(state, p.model),
        promptTokens: generous,
        outputTokens: call.maxOutputTokens,
      });
      if (numCtx.kind === "refuse") {
        refused = new ProxyError(413, "prompt-too-large", numCtx.message, {
          model: p.model,
          largest_context: numCtx.largestContext,
          prompt_tokens: generous,
        });
      } else {
        applyNumCtx(call.body, numCtx);
        record.numCtx = numCtx.value;
      }
    }
    if (refused) {
      fail(refused, attribution);
      return next;
    }
    if (translation && call.loadOnly) {
      // A fixed-model engine is always loaded: Ollama's load request is answered here.
      record.status = 200;
      const answer = unloadAnswer(call);
      sendJson(res, 200, "done_reason" in answer ? { ...answer, done_reason: "load" } : answer, attribution);
      return next;
    }
    call.body.model = p.model;
    let hideUsage = false;
    if ((call.api === "openai" || call.api === "completions") && call.stream && !call.includeUsage) {
      // Ask for the usage chunk (the engine's prompt count) and keep it from the caller.
      const so = call.body.stream_options;
      call.body.stream_options = {
        ...(typeof so === "object" && so !== null ? so : {}),
        include_usage: true,
      };
      hideUsage = true;
    }
    outcome = await forward({
      dispatcher: ctx.dispatcher,
      api: call.api,
      ...(translation ? { translation } : {}),
      endpoint: p.endpoint,
      provider: p.provider || p.endpoint,
      model: p.model,
      body: JSON.stringify(translation ? translation.body : call.body),
      stream: call.stream,
      hideUsage,
      res,
      headers: attribution,
      signal,
      clientGone: () => gone.signal.aborted,
      timeoutMs: settings.timeoutMs,
      retryAfterS: settings.retryAfterS,
    });
    record.latencyMs = outcome.latencyMs;
    switch (outcome.kind) {
      case "ok":
        record.status = outcome.status;
        record.ttfbMs = outcome.ttfbMs;
        break;
      case "failed":
        if (outcome.unreachable === true && mayRetry && !res.headersSent) next = "retry";
        else fail(outcome.error, attribution);
        break;
      case "broken":
        record.status = 200;
        record.reason = "stream-error";
        record.ttfbMs = outcome.ttfbMs;
        break;
      case "client-gone":
        record.reason = "client-gone";
        record.ttfbMs = outcome.ttfbMs;
        break;
    }
  } finally {
    exact.release();
    if (renew) clearInterval(renew);
    await releaseCall(ctx, call, tokens, p, outcome, refused, record, numCtx);
  }
  return next;
}
