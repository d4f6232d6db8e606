// Ollama's OpenAI-compatible legacy POST /v1/completions: a prompt (one string; Ollama takes no
// batch) answered as `text_completion`, SSE chunks when streaming, usage on request. Like the
// chat route, it runs at the server's default context (no num_ctx).
import type { ServerResponse } from "node:http";
import { modelNotFoundMessage, normalizeModelName } from "../engines/index.js";
import { sendJson } from "../net/index.js";
import { type AnswerPlan, planAnswer } from "./answer.js";
import { applyRequestFaults, type EmulatorCore, type RequestContext, readRequestBody } from "./core.js";
import { HttpError, parseJsonBody } from "./http-util.js";
import {
  type AnswerSink,
  cacheReportOf,
  openaiError,
  openaiIds,
  openaiUsage,
  runInference,
  sseEvent,
  sseWriter,
  withTimings,
} from "./inference.js";
import { requireCapabilities } from "./ollama-api.js";
import { textChain } from "./prompt-parts.js";
import { generatePromptTokens, truncateTokens } from "./tokenizer.js";

interface CompletionRequest {
  model: string;
  prompt: string;
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | undefined;
}

function parseCompletionRequest(body: Record<string, unknown>): CompletionRequest {
  const bad = (field: string, want: string) =>
    new HttpError(400, `json: cannot unmarshal ${field} into Go struct field of type ${want}`);
  if (typeof body.model !== "string" || body.model === "") throw new HttpError(400, "model is required");
  let prompt = body.prompt;
  // Ollama reads a one-element list as its string; a longer batch it does not serve.
  if (Array.isArray(prompt) && prompt.length === 1) prompt = prompt[0];
  if (typeof prompt !== "string") throw bad("prompt", "string");
  if (body.stream !== undefined && typeof body.stream !== "boolean") throw bad("stream", "bool");
  let includeUsage = false;
  const so = body.stream_options;
  if (so !== undefined && so !== null) {
    if (typeof so !== "object") throw bad("stream_options", "openai.StreamOptions");
    const iu = (so as Record<string, unknown>).include_usage;
    if (iu !== undefined && typeof iu !== "boolean") throw bad("stream_options.include_usage", "bool");
    includeUsage = iu === true;
  }
  const mt = body.max_tokens;
  if (mt !== undefined && mt !== null && !(typeof mt === "number" && Number.isInteger(mt)))
    throw bad("max_tokens", "int");
  return {
    model: body.model,
    prompt,
    stream: body.stream === true,
    includeUsage,
    maxTokens: typeof mt === "number" ? mt : undefined,
  };
}

/** The legacy completions framing (also used by the engine personalities). */
export function completionSink(
  core: EmulatorCore,
  res: ServerResponse,
  model: string,
  stream: boolean,
  includeUsage: boolean,
): AnswerSink {
  const { id, created } = openaiIds(core, "cmpl");
  const head = { id, object: "text_completion", created, model, system_fingerprint: "fp_ollama" };
  const sse = sseWriter(res);
  let text = "";
  return {
    pieces(pieces) {
      const shown = pieces.filter((p) => p.kind === "content");
      if (!stream) {
        for (const p of shown) text += p.text;
        return;
      }
      if (shown.length === 0) return;
      sse.begin();
      res.write(
        shown
          .map((p) =>
            sseEvent({ ...head, choices: [{ text: p.text, index: 0, logprobs: null, finish_reason: null }] }),
          )
          .join(""),
      );
    },
    done(result, plan: AnswerPlan) {
      if (!stream) {
        sendJson(res, 200, {
          ...head,
          choices: [{ text, index: 0, logprobs: null, finish_reason: plan.reason }],
          usage: openaiUsage(result, cacheReportOf(core)),
          ...withTimings(core, result),
        });
        return;
      }
      sse.begin();
      let out = sseEvent({
        ...head,
        choices: [{ text: "", index: 0, logprobs: null, finish_reason: plan.reason }],
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

/** The answer to a plain prompt (no chat template, tools or format), cut at numPredict. */
export function completionPlan(
  model: string,
  prompt: string,
  proseTokens: number,
  numPredict: number | undefined,
): AnswerPlan {
  return planAnswer({
    model,
    lastRole: "user",
    lastText: prompt,
    proseTokens,
    think: false,
    format: undefined,
    tools: [],
    toolChoice: "none",
    numPredict,
  });
}

export async function handleCompletions(ctx: RequestContext): Promise<void> {
  const { core } = ctx;
  const req = parseCompletionRequest(parseJsonBody(await readRequestBody(ctx), "openai.CompletionRequest"));
  const spec = core.catalog.get(normalizeModelName(req.model));
  if (!spec) throw new HttpError(404, modelNotFoundMessage(req.model));
  if (await applyRequestFaults(ctx, spec.name)) return;
  requireCapabilities(spec, req.model, "generate", {});
  const numCtx = core.gpu.effectiveNumCtx(spec.name);
  const tokens = generatePromptTokens(req.prompt, undefined, false);
  const plan = completionPlan(spec.name, req.prompt, core.config.outputTokens, req.maxTokens);
  runInference(core, ctx.res, completionSink(core, ctx.res, spec.name, req.stream, req.includeUsage), {
    path: ctx.path,
    model: spec.name,
    numCtx,
    keepAliveMs: undefined,
    promptTokens: truncateTokens(tokens, numCtx, undefined).evaluated,
    plan,
    chain: tokens <= numCtx ? textChain(req.prompt) : undefined,
  });
}
