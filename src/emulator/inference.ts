// One inference request end to end: submit to the GPU model, stream the deterministic answer
// in the API's framing (Ollama NDJSON or JSON, OpenAI SSE or JSON), apply mid-stream faults,
// and free the slot when the client goes away.
import type { ServerResponse } from "node:http";
import { sendJson } from "../net/index.js";
import type { AnswerPiece, AnswerPlan, ToolCall } from "./answer.js";
import { type EmulatorCore, isoAt } from "./core.js";
import type { JobHandle, JobResult } from "./gpu-types.js";
import { sendError, toNs } from "./http-util.js";
import type { PromptChain, PromptPart } from "./prompt-cache.js";
import { answerPart } from "./prompt-parts.js";
import { hash32 } from "./tokenizer.js";

/** Writes one answer in one API's framing. */
export interface AnswerSink {
  pieces(pieces: AnswerPiece[]): void;
  done(result: JobResult, plan: AnswerPlan): void;
  fail(status: number, message: string): void;
}

function metrics(r: JobResult): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (k: string, v: number) => {
    if (v > 0) out[k] = v;
  };
  put("total_duration", toNs(r.totalMs));
  put("load_duration", toNs(r.loadMs));
  // The whole prompt; its duration is the uncached part's (Ollama's runners), and the cached
  // share is told apart (prompt_eval_cached_count, Ollama 0.33.3 and later).
  put("prompt_eval_count", r.promptTokens);
  put("prompt_eval_cached_count", r.cachedTokens);
  put("prompt_eval_duration", toNs(r.promptEvalMs));
  put("eval_count", r.evalTokens);
  put("eval_duration", toNs(r.evalMs));
  return out;
}

/** A tool call's id: a function of the model, the call and its place, like "call_1k2j3h4g". */
function callId(model: string, call: ToolCall, index: number): string {
  return `call_${hash32(`${model}\n${index}\n${call.name}\n${JSON.stringify(call.arguments)}`).toString(36)}`;
}

/** Ollama's /api/chat and /api/generate framing. */
export function ollamaSink(
  core: EmulatorCore,
  res: ServerResponse,
  api: "chat" | "generate",
  model: string,
  stream: boolean,
): AnswerSink {
  let started = false;
  let text = "";
  let thinking = "";
  const body = (content: string, think: string, calls: ToolCall[] = []) => {
    const extra: Record<string, unknown> = {};
    if (think !== "") extra.thinking = think;
    if (calls.length > 0)
      extra.tool_calls = calls.map((c, i) => ({
        id: callId(model, c, i),
        function: { index: i, name: c.name, arguments: c.arguments },
      }));
    return api === "chat"
      ? { message: { role: "assistant", content, ...extra } }
      : { response: content, ...extra };
  };
  const begin = () => {
    if (started) return;
    started = true;
    res.writeHead(200, { "Content-Type": "application/x-ndjson" });
  };
  return {
    pieces(pieces) {
      if (!stream) {
        for (const p of pieces) {
          if (p.kind === "content") text += p.text;
          else if (p.kind === "thinking") thinking += p.text;
        }
        return;
      }
      const shown = pieces.filter((p) => p.kind !== "tool");
      if (shown.length === 0) return;
      begin();
      const created_at = isoAt(core);
      res.write(
        shown
          .map((p) => {
            const b = p.kind === "thinking" ? body("", p.text) : body(p.text, "");
            return `${JSON.stringify({ model, created_at, ...b, done: false })}\n`;
          })
          .join(""),
      );
    },
    done(result, plan) {
      const created_at = isoAt(core);
      const head = stream ? body("", "") : body(text, thinking, plan.toolCalls);
      const final =
        api === "chat"
          ? { model, created_at, ...head, done_reason: plan.reason, done: true, ...metrics(result) }
          : { model, created_at, ...head, done: true, done_reason: plan.reason, ...metrics(result) };
      if (!stream) {
        sendJson(res, 200, final);
        return;
      }
      begin();
      let out = "";
      // Ollama sends the parsed tool calls in a chunk of their own, before the final one.
      if (plan.toolCalls.length > 0)
        out += `${JSON.stringify({ model, created_at, ...body("", "", plan.toolCalls), done: false })}\n`;
      res.end(`${out}${JSON.stringify(final)}\n`);
    },
    fail(status, message) {
      if (!started) {
        sendError(res, status, message);
        return;
      }
      res.end(`${JSON.stringify({ error: message })}\n`);
    },
  };
}

export function openaiErrorType(status: number): string {
  if (status === 400) return "invalid_request_error";
  if (status === 404) return "not_found_error";
  return "api_error";
}

export function openaiError(message: string, status: number): unknown {
  return { error: { message, type: openaiErrorType(status), param: null, code: null } };
}

/** An OpenAI answer's id (`<prefix>-N`) and creation time (epoch seconds, emulated clock). */
export function openaiIds(core: EmulatorCore, prefix: string): { id: string; created: number } {
  return {
    id: `${prefix}-${core.nextCompletionId()}`,
    created: Math.floor(core.clock.wallTimeOf(core.clock.now()) / 1000),
  };
}

/**
 * Whether an engine reports the prompt tokens reused from its cache (docs/rules/engines.md
 * "Prompt caches"): llama.cpp always (0 too); Ollama when some were; vLLM and SGLang when some
 * were and their flag is on (--enable-prompt-tokens-details, --enable-cache-report).
 */
export type CacheReport = "always" | "when-cached" | "never";

export function cacheReportOf(core: EmulatorCore): CacheReport {
  const { engine, cacheReport } = core.config;
  if (engine === "llamacpp") return "always";
  if (engine === "ollama") return "when-cached";
  return cacheReport ? "when-cached" : "never";
}

/** OpenAI's usage block from a finished job: the whole prompt, and its cached share where reported. */
export function openaiUsage(r: JobResult, report: CacheReport = "never"): Record<string, unknown> {
  const shown = report === "always" || (report === "when-cached" && r.cachedTokens > 0);
  return {
    prompt_tokens: r.promptTokens,
    completion_tokens: r.evalTokens,
    total_tokens: r.promptTokens + r.evalTokens,
    ...(shown ? { prompt_tokens_details: { cached_tokens: r.cachedTokens } } : {}),
  };
}

/** llama.cpp's `timings` of an answer (its OpenAI routes carry them); undefined on other engines. */
export function llamacppTimings(core: EmulatorCore, r: JobResult): Record<string, number> | undefined {
  if (core.config.engine !== "llamacpp") return undefined;
  const promptN = r.promptTokens - r.cachedTokens;
  const per = (ms: number, n: number) => (n > 0 ? ms / n : 0);
  const rate = (ms: number, n: number) => (ms > 0 ? (n / ms) * 1000 : 0);
  return {
    cache_n: r.cachedTokens,
    prompt_n: promptN,
    prompt_ms: r.promptEvalMs,
    prompt_per_token_ms: per(r.promptEvalMs, promptN),
    prompt_per_second: rate(r.promptEvalMs, promptN),
    predicted_n: r.evalTokens,
    predicted_ms: r.evalMs,
    predicted_per_token_ms: per(r.evalMs, r.evalTokens),
    predicted_per_second: rate(r.evalMs, r.evalTokens),
  };
}

/** `{timings}` on llama.cpp's answers, nothing elsewhere. */
export function withTimings(core: EmulatorCore, r: JobResult): { timings?: Record<string, number> } {
  const timings = llamacppTimings(core, r);
  return timings ? { timings } : {};
}

/** One server-sent event. */
export function sseEvent(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** An SSE answer whose headers go out with its first write. */
export function sseWriter(res: ServerResponse): { readonly started: boolean; begin: () => void } {
  let started = false;
  return {
    get started() {
      return started;
    },
    begin() {
      if (started) return;
      started = true;
      res.writeHead(200, {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        Connection: "keep-alive",
      });
    },
  };
}

/**
 * OpenAI's /v1/chat/completions framing (SSE when streaming). Thinking goes in `reasoning`,
 * the field Ollama's OpenAI compatibility layer uses.
 */
export function openaiSink(
  core: EmulatorCore,
  res: ServerResponse,
  model: string,
  stream: boolean,
  includeUsage: boolean,
): AnswerSink {
  const { id, created } = openaiIds(core, "chatcmpl");
  const head = { id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_ollama" };
  const sse = sseWriter(res);
  let text = "";
  let reasoning = "";
  const toolCalls = (calls: ToolCall[]) =>
    calls.map((c, i) => ({
      id: callId(model, c, i),
      index: i,
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
  const finish = (plan: AnswerPlan) => (plan.toolCalls.length > 0 ? "tool_calls" : plan.reason);
  return {
    pieces(pieces) {
      if (!stream) {
        for (const p of pieces) {
          if (p.kind === "content") text += p.text;
          else if (p.kind === "thinking") reasoning += p.text;
        }
        return;
      }
      const shown = pieces.filter((p) => p.kind !== "tool");
      if (shown.length === 0) return;
      sse.begin();
      res.write(
        shown
          .map((p) => {
            const delta =
              p.kind === "thinking"
                ? { role: "assistant", content: "", reasoning: p.text }
                : { role: "assistant", content: p.text };
            return sseEvent({ ...head, choices: [{ index: 0, delta, finish_reason: null }] });
          })
          .join(""),
      );
    },
    done(result, plan) {
      if (!stream) {
        const message: Record<string, unknown> = { role: "assistant", content: text };
        if (reasoning !== "") message.reasoning = reasoning;
        if (plan.toolCalls.length > 0) message.tool_calls = toolCalls(plan.toolCalls);
        sendJson(res, 200, {
          id,
          object: "chat.completion",
          created,
          model,
          system_fingerprint: "fp_ollama",
          choices: [{ index: 0, message, finish_reason: finish(plan) }],
          usage: openaiUsage(result, cacheReportOf(core)),
          ...withTimings(core, result),
        });
        return;
      }
      sse.begin();
      let out = "";
      if (plan.toolCalls.length > 0) {
        const delta = { role: "assistant", content: "", tool_calls: toolCalls(plan.toolCalls) };
        out += sseEvent({ ...head, choices: [{ index: 0, delta, finish_reason: null }] });
      }
      out += sseEvent({
        ...head,
        choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: finish(plan) }],
        ...withTimings(core, result),
      });
      if (includeUsage)
        out += sseEvent({ ...head, choices: [], usage: openaiUsage(result, cacheReportOf(core)) });
      res.end(`${out}data: [DONE]\n\n`);
    },
    fail(status, message) {
      if (!sse.started) {
        sendJson(res, status, openaiError(message, status));
        return;
      }
      res.end(sseEvent(openaiError(message, 500)));
    },
  };
}

export interface InferenceParams {
  path: string;
  model: string;
  numCtx: number;
  keepAliveMs: number | undefined;
  promptTokens: number;
  /** The answer, one piece per generated token (see answer.ts). */
  plan: AnswerPlan;
  /** The prompt as the engine's prompt cache sees it; absent: nothing reused or kept. */
  chain?: PromptChain | undefined;
}

/** The answer as the next turn sends it back, when it is plain text (tool calls are not kept). */
function answerOf(plan: AnswerPlan): PromptPart | undefined {
  if (plan.toolCalls.length > 0) return undefined;
  return answerPart(
    plan.pieces
      .filter((x) => x.kind === "content")
      .map((x) => x.text)
      .join(""),
  );
}

/** Runs one inference request to its end (or the client's departure). */
export function runInference(
  core: EmulatorCore,
  res: ServerResponse,
  sink: AnswerSink,
  p: InferenceParams,
): void {
  const fctx = { path: p.path, model: p.model };
  const drop = core.faults.take("drop", fctx);
  const midError = core.faults.take("error-mid-stream", fctx);
  const stall = core.faults.take("stall", fctx);
  let finished = false;
  let handle: JobHandle | undefined;
  const stop = () => {
    finished = true;
    handle?.cancel();
  };
  const submitted = core.gpu.submit(
    {
      model: p.model,
      numCtx: p.numCtx,
      keepAliveMs: p.keepAliveMs,
      kind: "infer",
      promptTokens: p.promptTokens,
      outputTokens: p.plan.pieces.length,
      cache: p.chain ? { chain: p.chain, answer: answerOf(p.plan) } : undefined,
      stall: stall
        ? { afterTokens: stall.afterTokens ?? 1, ms: stall.ms ?? Number.POSITIVE_INFINITY }
        : undefined,
    },
    {
      onTokens(first, count) {
        if (finished) return;
        let n = count;
        const cut = drop ?? midError;
        const cutAt = cut ? (cut.afterTokens ?? 1) : Number.POSITIVE_INFINITY;
        if (first + count >= cutAt) n = Math.max(0, cutAt - first);
        if (n > 0) sink.pieces(p.plan.pieces.slice(first, first + n));
        if (first + count < cutAt) return;
        stop();
        if (drop) {
          res.socket?.destroy();
          res.destroy();
        } else {
          sink.fail(500, midError?.message ?? "emulated fault: the runner stopped mid-stream");
        }
      },
      onDone(result) {
        if (finished) return;
        finished = true;
        sink.done(result, p.plan);
      },
      onError(message, status) {
        if (finished) return;
        finished = true;
        sink.fail(status, message);
      },
    },
  );
  if (!submitted.ok) {
    finished = true;
    sink.fail(submitted.status, submitted.message);
    return;
  }
  handle = submitted.job;
  if (finished) return;
  res.on("close", () => {
    if (!finished) stop();
  });
}
