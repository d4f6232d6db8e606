// The OpenAI routes every personality serves (/v1/chat/completions, /v1/completions), with the
// engine's own model check, context check and error bodies (src/engines/README.md). Answers
// reuse the emulator's planner and SSE framing (answer.ts, inference.ts).
import type { ServerResponse } from "node:http";
import { sendJson, sendText } from "../../net/index.js";
import type { AnswerPlan } from "../answer.js";
import { applyRequestFaults, type EmulatorCore, type RequestContext, readRequestBody } from "../core.js";
import { handleOpenAIEmbeddings } from "../embeddings.js";
import { HttpError, parseJsonBody } from "../http-util.js";
import { openaiSink, runInference } from "../inference.js";
import { requireCapabilities } from "../ollama-api.js";
import { openAIChatPlan } from "../openai-api.js";
import { completionPlan, completionSink } from "../openai-completions.js";
import type { PromptChain } from "../prompt-cache.js";
import { chatChain, textChain } from "../prompt-parts.js";
import { parseOpenAIChatRequest } from "../requests.js";
import type { FixedModelGpu } from "./fixed-gpu.js";
import type { EngineMetrics } from "./metrics.js";
import type { Personality } from "./personality.js";
import { chatTokens, tokenizePieces } from "./tokens.js";

/** An answer in the engine's own shape, thrown by a handler and written by engineHandler. */
export class EngineReply extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`engine reply ${status}`);
  }
}

export interface PersonalityContext {
  readonly p: Personality;
  readonly gpu: FixedModelGpu;
}

export type Handler = (ctx: RequestContext) => Promise<void>;
/** A personality's routes by "METHOD /path"; HEAD is looked up as GET. */
export type PersonalityRoutes = (method: string, path: string) => Handler | undefined;

/**
 * The routes every personality serves (/metrics and the OpenAI chat, completions and embeddings
 * routes) with the engine's own table over them, each answering failures in the engine's shape.
 */
export function personalityRoutes(
  pc: PersonalityContext,
  metrics: EngineMetrics,
  own: Record<string, Handler>,
): PersonalityRoutes {
  const shared: Record<string, Handler> = {
    "GET /metrics": async (ctx) => {
      const m = await metrics.render();
      sendText(ctx.res, 200, m.text, m.contentType);
    },
    "POST /v1/chat/completions": (ctx) => personalityChat(pc, ctx),
    "POST /v1/completions": (ctx) => personalityCompletions(pc, ctx),
    "POST /v1/embeddings": handleOpenAIEmbeddings,
  };
  const table = new Map(
    Object.entries({ ...shared, ...own }).map(([route, fn]) => [route, engineHandler(pc.p, fn)]),
  );
  return (method, path) => table.get(`${method === "HEAD" ? "GET" : method} ${path}`);
}

function errorType(status: number): string {
  if (status === 404) return "NotFoundError";
  if (status === 400) return "BadRequestError";
  return "InternalServerError";
}

/** An error body as the engine writes it. */
export function engineError(p: Personality, status: number, message: string): unknown {
  if (p.engine === "llamacpp") {
    const type =
      status === 400 ? "invalid_request_error" : status === 404 ? "not_found_error" : "server_error";
    return { error: { code: status, message, type } };
  }
  // vLLM (the release read) and SGLang: OpenAI-style error at the top level.
  return { object: "error", message, type: errorType(status), param: null, code: status };
}

/** What the engine answers for a path it does not serve (the Ollama /api/* routes included). */
export function sendNotFound(p: Personality, res: ServerResponse): void {
  if (p.engine === "llamacpp") sendJson(res, 404, engineError(p, 404, "File Not Found"));
  else sendJson(res, 404, { detail: "Not Found" }); // FastAPI's default (vLLM, SGLang)
}

/** Wraps a handler so that its failures answer in the engine's shape. */
export function engineHandler(
  p: Personality,
  fn: (ctx: RequestContext) => Promise<void>,
): (ctx: RequestContext) => Promise<void> {
  return async (ctx) => {
    try {
      await fn(ctx);
    } catch (err) {
      if (ctx.res.headersSent || ctx.res.destroyed) {
        ctx.res.end();
        return;
      }
      if (err instanceof EngineReply) sendJson(ctx.res, err.status, err.body);
      else {
        const status = err instanceof HttpError ? err.status : 500;
        sendJson(ctx.res, status, engineError(p, status, err instanceof Error ? err.message : String(err)));
      }
    }
  };
}

/** The /v1/models entry vLLM and SGLang share (each names itself as owner). */
export function openaiModelEntry(
  pc: PersonalityContext,
  ctx: RequestContext,
  owner: string,
): Record<string, unknown> {
  const id = pc.p.spec.name;
  return {
    id,
    object: "model",
    created: Math.floor(ctx.core.startedAt / 1000),
    owned_by: owner,
    root: id,
    parent: null,
    max_model_len: pc.p.gpu.contextLength,
  };
}

/** The served model's name for a request naming `model`: vLLM checks it; the others ignore it. */
export function servedModel(pc: PersonalityContext, model: unknown): string {
  const name = pc.p.spec.name;
  if (pc.p.engine !== "vllm" || model === undefined || model === null || model === name) return name;
  throw new EngineReply(404, engineError(pc.p, 404, `The model \`${String(model)}\` does not exist.`));
}

/** The engine's refusal of a prompt over its context limit (null when it fits). */
export function overflow(
  pc: PersonalityContext,
  prompt: number,
  maxTokens: number | undefined,
): EngineReply | null {
  const { p } = pc;
  const ctx = p.gpu.contextLength;
  if (p.engine === "llamacpp") {
    // A prompt must leave room for a token; a long answer stops at the context ("length").
    if (prompt < ctx) return null;
    return new EngineReply(400, {
      error: {
        code: 400,
        message: `request (${prompt} tokens) exceeds the available context size (${ctx} tokens), try increasing it`,
        type: "exceed_context_size_error",
        n_prompt_tokens: prompt,
        n_ctx: ctx,
      },
    });
  }
  if (p.engine === "sglang") {
    if (prompt >= ctx)
      return bad(
        pc,
        `The input (${prompt} tokens) is longer than the model's context length (${ctx} tokens).`,
      );
    if (maxTokens !== undefined && prompt + maxTokens > ctx)
      return bad(
        pc,
        `Requested token count exceeds the model's maximum context length of ${ctx} tokens. You requested a total of ${prompt + maxTokens} tokens: ${prompt} tokens from the input messages and ${maxTokens} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`,
      );
    return null;
  }
  const head = `This model's maximum context length is ${ctx} tokens. However, you requested`;
  if (maxTokens === undefined) {
    if (prompt < ctx) return null;
    return bad(pc, `${head} ${prompt} tokens in the messages, Please reduce the length of the messages.`);
  }
  if (prompt + maxTokens <= ctx) return null;
  return bad(
    pc,
    `${head} ${prompt + maxTokens} tokens (${prompt} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
  );
}

function bad(pc: PersonalityContext, message: string): EngineReply {
  return new EngineReply(400, engineError(pc.p, 400, message));
}

/** POST /v1/chat/completions on a personality. */
export async function personalityChat(pc: PersonalityContext, ctx: RequestContext): Promise<void> {
  const { core } = ctx;
  const body = parseJsonBody(await readRequestBody(ctx), "ChatCompletionRequest");
  // llama.cpp and SGLang serve their model whether the request names one or not.
  if (pc.p.engine !== "vllm" && (body.model === undefined || body.model === null))
    body.model = pc.p.spec.name;
  const req = parseOpenAIChatRequest(body);
  const model = servedModel(pc, req.model);
  const spec = pc.p.spec;
  if (await applyRequestFaults(ctx, model)) return;
  requireCapabilities(spec, req.model, "chat", { think: req.think, tools: req.tools.length });
  const prompt = chatTokens(req.messages, req.toolsJson);
  const refused = overflow(pc, prompt, req.maxTokens);
  if (refused) throw refused;
  const room = pc.p.gpu.contextLength - prompt;
  const plan = openAIChatPlan(
    spec.name,
    req,
    core.config.outputTokens,
    Math.min(req.maxTokens ?? room, room),
  );
  const sink = openaiSink(core, ctx.res, model, req.stream, req.includeUsage);
  run(core, ctx, pc, prompt, plan, sink, chatChain(req.messages, req.toolsJson));
}

/** POST /v1/completions on a personality: the prompt as given, no chat template. */
export async function personalityCompletions(pc: PersonalityContext, ctx: RequestContext): Promise<void> {
  const { core } = ctx;
  const body = parseJsonBody(await readRequestBody(ctx), "CompletionRequest");
  let promptText = body.prompt;
  if (Array.isArray(promptText) && promptText.length === 1) promptText = promptText[0];
  if (typeof promptText !== "string") throw new HttpError(400, "prompt must be a string");
  const mt = body.max_tokens;
  if (mt !== undefined && mt !== null && !(typeof mt === "number" && Number.isInteger(mt) && mt >= 0))
    throw new HttpError(400, "max_tokens must be a non-negative integer");
  if (body.stream !== undefined && typeof body.stream !== "boolean")
    throw new HttpError(400, "stream must be a boolean");
  const so = body.stream_options as Record<string, unknown> | undefined | null;
  const includeUsage = typeof so === "object" && so !== null && so.include_usage === true;
  const model = servedModel(pc, body.model);
  if (await applyRequestFaults(ctx, model)) return;
  requireCapabilities(pc.p.spec, model, "generate", {});
  const prompt = tokenizePieces(promptText).length;
  const maxTokens = typeof mt === "number" ? mt : undefined;
  const refused = overflow(pc, prompt, maxTokens);
  if (refused) throw refused;
  const room = pc.p.gpu.contextLength - prompt;
  const plan = completionPlan(
    pc.p.spec.name,
    promptText,
    core.config.outputTokens,
    Math.min(maxTokens ?? room, room),
  );
  const sink = completionSink(core, ctx.res, model, body.stream === true, includeUsage);
  run(core, ctx, pc, prompt, plan, sink, textChain(promptText));
}

function run(
  core: EmulatorCore,
  ctx: RequestContext,
  pc: PersonalityContext,
  prompt: number,
  plan: AnswerPlan,
  sink: Parameters<typeof runInference>[2],
  chain: PromptChain,
): void {
  runInference(core, ctx.res, sink, {
    path: ctx.path,
    model: pc.p.spec.name,
    numCtx: pc.p.gpu.contextLength,
    keepAliveMs: undefined,
    promptTokens: prompt,
    plan,
    chain,
  });
}
