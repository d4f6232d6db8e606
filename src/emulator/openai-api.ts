// Ollama's OpenAI-compatible endpoints: POST /v1/chat/completions (SSE when streaming) and
// GET /v1/models. Like Ollama, these requests cannot set num_ctx: they run at the server's
// default context, so mixing them with /api/chat calls that set num_ctx reloads the model.
import { modelNotFoundMessage, normalizeModelName } from "../engines/index.js";
import { sendJson } from "../net/index.js";
import { type AnswerPlan, planAnswer } from "./answer.js";
import { applyRequestFaults, type RequestContext, readRequestBody } from "./core.js";
import { HttpError, parseJsonBody } from "./http-util.js";
import { openaiSink, runInference } from "./inference.js";
import { requireCapabilities } from "./ollama-api.js";
import { chatChain } from "./prompt-parts.js";
import { type OpenAIChatRequest, parseOpenAIChatRequest } from "./requests.js";
import { truncateChat } from "./tokenizer.js";

/** The answer to an OpenAI chat request: its last message, tools and format, cut at numPredict. */
export function openAIChatPlan(
  model: string,
  req: OpenAIChatRequest,
  proseTokens: number,
  numPredict: number | undefined,
): AnswerPlan {
  const last = req.messages[req.messages.length - 1];
  return planAnswer({
    model,
    lastRole: last?.role ?? "user",
    lastText: last?.content ?? "",
    proseTokens,
    think: req.think === true,
    format: req.format,
    tools: req.tools,
    toolChoice: req.toolChoice,
    numPredict,
  });
}

export async function handleChatCompletions(ctx: RequestContext): Promise<void> {
  const { core } = ctx;
  const req = parseOpenAIChatRequest(
    parseJsonBody(await readRequestBody(ctx), "openai.ChatCompletionRequest"),
  );
  const spec = core.catalog.get(normalizeModelName(req.model));
  if (!spec) throw new HttpError(404, modelNotFoundMessage(req.model));
  if (await applyRequestFaults(ctx, spec.name)) return;
  requireCapabilities(spec, req.model, "chat", { think: req.think, tools: req.tools.length });
  const numCtx = core.gpu.effectiveNumCtx(spec.name);
  const toolsTokens = req.toolsJson ? Math.ceil(req.toolsJson.length / 3.5) : 0;
  const cut = truncateChat(req.messages, numCtx, toolsTokens);
  const plan = openAIChatPlan(spec.name, req, core.config.outputTokens, req.maxTokens);
  runInference(core, ctx.res, openaiSink(core, ctx.res, spec.name, req.stream, req.includeUsage), {
    path: ctx.path,
    model: spec.name,
    numCtx,
    keepAliveMs: undefined,
    promptTokens: Math.min(cut.renderedTokens, numCtx),
    plan,
    chain: cut.renderedTokens <= numCtx ? chatChain(cut.kept, req.toolsJson) : undefined,
  });
}

export async function handleModels(ctx: RequestContext): Promise<void> {
  if (await applyRequestFaults(ctx)) return;
  const created = Math.floor(ctx.core.startedAt / 1000);
  sendJson(ctx.res, 200, {
    object: "list",
    data: [...ctx.core.catalog.values()].map((spec) => ({
      id: spec.name,
      object: "model",
      created,
      owned_by: spec.name.includes("/") ? (spec.name.split("/").slice(-2, -1)[0] ?? "library") : "library",
    })),
  });
}
