// One inference request end to end: submit to the GPU model, stream the deterministic answer
// in the API's framing (Ollama NDJSON or JSON, OpenAI SSE or JSON), apply mid-stream faults,
// and free the slot when the client goes away.
import type { ServerResponse } from "node:http";
import { type EmulatorCore, isoAt } from "./core.js";
import type { JobHandle, JobResult } from "./gpu-types.js";
import { sendError, sendJson, toNs } from "./http-util.js";
import { answerToken } from "./tokenizer.js";

export type FinishReason = "stop" | "length";

/** Writes one answer in one API's framing. */
export interface AnswerSink {
  tokens(texts: string[]): void;
  done(result: JobResult, reason: FinishReason): void;
  fail(status: number, message: string): void;
}

function metrics(r: JobResult): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (k: string, v: number) => {
    if (v > 0) out[k] = v;
  };
  put("total_duration", toNs(r.totalMs));
  put("load_duration", toNs(r.loadMs));
  put("prompt_eval_count", r.promptTokens);
  put("prompt_eval_duration", toNs(r.promptEvalMs));
  put("eval_count", r.evalTokens);
  put("eval_duration", toNs(r.evalMs));
  return out;
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
  const body = (content: string) =>
    api === "chat" ? { message: { role: "assistant", content } } : { response: content };
  const begin = () => {
    if (started) return;
    started = true;
    res.writeHead(200, { "Content-Type": "application/x-ndjson" });
  };
  return {
    tokens(texts) {
      if (!stream) {
        text += texts.join("");
        return;
      }
      begin();
      const created_at = isoAt(core);
      res.write(
        texts.map((t) => `${JSON.stringify({ model, created_at, ...body(t), done: false })}\n`).join(""),
      );
    },
    done(result, reason) {
      const created_at = isoAt(core);
      const final =
        api === "chat"
          ? {
              model,
              created_at,
              ...body(stream ? "" : text),
              done_reason: reason,
              done: true,
              ...metrics(result),
            }
          : {
              model,
              created_at,
              ...body(stream ? "" : text),
              done: true,
              done_reason: reason,
              ...metrics(result),
            };
      if (!stream) {
        sendJson(res, 200, final);
        return;
      }
      begin();
      res.end(`${JSON.stringify(final)}\n`);
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

/** OpenAI's /v1/chat/completions framing (SSE when streaming). */
export function openaiSink(
  core: EmulatorCore,
  res: ServerResponse,
  model: string,
  stream: boolean,
  includeUsage: boolean,
): AnswerSink {
  const id = `chatcmpl-${core.nextCompletionId()}`;
  const created = Math.floor(core.clock.wallTimeOf(core.clock.now()) / 1000);
  const head = { id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_ollama" };
  let started = false;
  let text = "";
  const begin = () => {
    if (started) return;
    started = true;
    res.writeHead(200, {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      Connection: "keep-alive",
    });
  };
  const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
  const usage = (r: JobResult) => ({
    prompt_tokens: r.promptTokens,
    completion_tokens: r.evalTokens,
    total_tokens: r.promptTokens + r.evalTokens,
  });
  return {
    tokens(texts) {
      if (!stream) {
        text += texts.join("");
        return;
      }
      begin();
      res.write(
        texts
          .map((t) =>
            event({
              ...head,
              choices: [{ index: 0, delta: { role: "assistant", content: t }, finish_reason: null }],
            }),
          )
          .join(""),
      );
    },
    done(result, reason) {
      if (!stream) {
        sendJson(res, 200, {
          id,
          object: "chat.completion",
          created,
          model,
          system_fingerprint: "fp_ollama",
          choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: reason }],
          usage: usage(result),
        });
        return;
      }
      begin();
      let out = event({
        ...head,
        choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: reason }],
      });
      if (includeUsage) out += event({ ...head, choices: [], usage: usage(result) });
      res.end(`${out}data: [DONE]\n\n`);
    },
    fail(status, message) {
      if (!started) {
        sendJson(res, status, openaiError(message, status));
        return;
      }
      res.end(event(openaiError(message, 500)));
    },
  };
}

export interface InferenceParams {
  path: string;
  model: string;
  numCtx: number;
  keepAliveMs: number | undefined;
  promptTokens: number;
  outputTokens: number;
  reason: FinishReason;
  /** Seed of the deterministic answer. */
  seed: number;
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
      outputTokens: p.outputTokens,
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
        const texts: string[] = [];
        for (let i = 0; i < n; i++) texts.push(answerToken(p.seed, first + i, p.outputTokens));
        if (texts.length > 0) sink.tokens(texts);
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
        sink.done(result, p.reason);
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
