// The OpenAI routes in llama-server's shapes (src/engines/README.md): POST /v1/chat/completions
// (and /chat/completions) renders the model's chat template and tokenizes it as /apply-template
// then /tokenize with add_special would; POST /v1/completions (and /completions is llama.cpp's
// own route) takes the prompt as given. Usage carries prompt_tokens_details.cached_tokens (the
// prompt tokens reused from the slot), answers carry llama.cpp's `timings`, streams end with
// `data: [DONE]` and, with stream_options.include_usage, a usage chunk before it.
import { randomBytes } from "node:crypto";
import { invalidArgument } from "../errors/index.js";
import { type AnswerShape, answerTask, type TaskOutput } from "./answer.js";
import { readMessages } from "./chat.js";
import type { EngineRequest, Handler } from "./http.js";
import type { EngineModel } from "./model-set.js";
import { type Body, readGenerationParams } from "./request-params.js";
import { resolveModel, timings, tokenize } from "./task.js";

function finishReason(out: TaskOutput): "stop" | "length" {
  return out.stopType === "limit" ? "length" : "stop";
}

function usage(out: TaskOutput): Record<string, unknown> {
  return {
    completion_tokens: out.predictedN,
    prompt_tokens: out.nPrompt,
    total_tokens: out.nPrompt + out.predictedN,
    prompt_tokens_details: { cached_tokens: out.cacheN },
  };
}

/** What the OpenAI routes refuse rather than ignore: this engine has no equivalent. */
function refuseUnsupported(body: Body): void {
  const n = body.n;
  if (n !== undefined && n !== null && n !== 1) throw invalidArgument("n", "only 1 choice is supported");
  const format = (body.response_format as { type?: unknown } | null | undefined)?.type;
  if (format !== undefined && format !== "text")
    throw invalidArgument("response_format", `"${String(format)}" is not supported by this engine`);
  if (body.logprobs === true) throw invalidArgument("logprobs", "not supported by this engine");
}

function includeUsage(body: Body): boolean {
  const o = body.stream_options as { include_usage?: unknown } | null | undefined;
  return typeof o === "object" && o !== null && o.include_usage === true;
}

interface OpenAiCall {
  m: EngineModel;
  body: Body;
  id: string;
  object: string;
  /** The choice of a streamed piece, of the last chunk and of the whole answer. */
  choice(text: string | null, finish: string | null, whole: boolean): Record<string, unknown>;
}

function shapeOf(r: EngineRequest, call: OpenAiCall): AnswerShape {
  const created = Math.floor(Date.now() / 1000);
  const model = typeof call.body.model === "string" ? call.body.model : call.m.id;
  const envelope = (object: string) => ({
    id: call.id,
    object,
    created,
    model,
    system_fingerprint: r.state.buildInfo,
  });
  const chunk = `${call.object}${call.object === "chat.completion" ? ".chunk" : ""}`;
  const usageChunk = includeUsage(call.body);
  return {
    ...(call.object === "chat.completion"
      ? { head: () => ({ choices: [call.choice(null, null, false)], ...envelope(chunk) }) }
      : {}),
    piece: (text) => ({ choices: [call.choice(text, null, false)], ...envelope(chunk) }),
    tail: (out) => [
      { choices: [call.choice("", finishReason(out), false)], ...envelope(chunk), timings: timings(out) },
      ...(usageChunk ? [{ choices: [], ...envelope(chunk), usage: usage(out) }] : []),
    ],
    whole: (out) => ({
      choices: [call.choice(out.content, finishReason(out), true)],
      ...envelope(call.object),
      usage: usage(out),
      timings: timings(out),
    }),
    done: true,
  };
}

const chatRoute: Handler = async (r) => {
  const body = await r.body();
  const m = resolveModel(r.state, body.model);
  refuseUnsupported(body);
  const prompt = tokenize(m, m.template.render(readMessages(body)), true, true);
  const params = readGenerationParams(body);
  const call: OpenAiCall = {
    m,
    body,
    id: `chatcmpl-${randomBytes(16).toString("hex")}`,
    object: "chat.completion",
    choice: (text, finish, whole) => {
      if (whole) return { finish_reason: finish, index: 0, message: { role: "assistant", content: text } };
      // The first chunk names the role; the last has an empty delta and the finish reason.
      const delta = text === null ? { role: "assistant", content: null } : finish ? {} : { content: text };
      return { finish_reason: finish, index: 0, delta };
    },
  };
  await answerTask(r, m, prompt, params, shapeOf(r, call));
};

const completionsRoute: Handler = async (r) => {
  const body = await r.body();
  const m = resolveModel(r.state, body.model);
  refuseUnsupported(body);
  let text = body.prompt;
  if (Array.isArray(text) && text.length === 1) text = text[0];
  if (typeof text !== "string") throw invalidArgument("prompt", "must be a string (one prompt per request)");
  const call: OpenAiCall = {
    m,
    body,
    id: `cmpl-${randomBytes(16).toString("hex")}`,
    object: "text_completion",
    choice: (piece, finish) => ({ text: piece ?? "", index: 0, logprobs: null, finish_reason: finish }),
  };
  await answerTask(r, m, tokenize(m, text, true, true), readGenerationParams(body), shapeOf(r, call));
};

export const OPENAI_ROUTES: Record<string, Handler> = {
  "POST /v1/chat/completions": chatRoute,
  "POST /chat/completions": chatRoute,
  "POST /v1/completions": completionsRoute,
};
