// llama.cpp's llama-server as the emulator plays it (src/engines/README.md): one model whatever
// the request names, /health, /props (n_ctx, total_slots), /slots, /metrics in llamacpp: names,
// /tokenize ({content} → {tokens}) and /apply-template, which renders the chat template so that
// tokenizing its prompt counts what the chat route counts.
import { LLAMACPP_DEFAULT_PARAMS, llamacppOllamaStyleModel } from "../../engines/index.js";
import { sendJson } from "../../net/index.js";
import type { RequestContext } from "../core.js";
import { readRequestBody } from "../core.js";
import { HttpError, parseJsonBody } from "../http-util.js";
import { parseOpenAIChatRequest } from "../requests.js";
import { engineError, type Handler, type PersonalityContext, personalityChat } from "./openai-routes.js";
import { renderChat, tokenIds, tokenizePieces } from "./tokens.js";

/** What /props reports as build_info per --engine-version. */
export const LLAMACPP_BUILDS = { current: "b6700-emulated", legacy: "b4500-emulated" } as const;

function optBool(body: Record<string, unknown>, field: string, dflt: boolean): boolean {
  const v = body[field];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "boolean") throw new HttpError(400, `"${field}" must be a boolean`);
  return v;
}

async function tokenize(ctx: RequestContext): Promise<void> {
  const body = parseJsonBody(await readRequestBody(ctx), "tokenize");
  if (typeof body.content !== "string") throw new HttpError(400, `"content" must be provided`);
  const pieces = tokenizePieces(body.content, optBool(body, "parse_special", true));
  if (optBool(body, "add_special", false)) pieces.unshift("<|bos|>");
  const ids = tokenIds(pieces);
  sendJson(ctx.res, 200, {
    tokens: optBool(body, "with_pieces", false) ? ids.map((id, i) => ({ id, piece: pieces[i] })) : ids,
  });
}

async function applyTemplate(ctx: RequestContext): Promise<void> {
  const body = parseJsonBody(await readRequestBody(ctx), "apply-template");
  const req = parseOpenAIChatRequest({ ...body, model: "template" });
  sendJson(ctx.res, 200, { prompt: renderChat(req.messages, req.toolsJson) });
}

function props(pc: PersonalityContext, ctx: RequestContext): void {
  const { p } = pc;
  sendJson(ctx.res, 200, {
    // llama-server's code sends only these two here (its README's example shows more).
    default_generation_settings: { n_ctx: p.gpu.contextLength, params: { ...LLAMACPP_DEFAULT_PARAMS } },
    total_slots: p.gpu.slots,
    model_alias: p.spec.name,
    model_path: p.spec.name,
    endpoint_slots: true,
    endpoint_props: false,
    endpoint_metrics: true,
    bos_token: "<|bos|>",
    eos_token: "<|eos|>",
    chat_template:
      "{% for m in messages %}<|im_start|><|{{ m.role }}|><|sep|>{{ m.content }}<|im_end|>{% endfor %}",
    modalities: { vision: false, audio: false },
    build_info: LLAMACPP_BUILDS[p.version],
    is_sleeping: false,
  });
}

function slots(pc: PersonalityContext, ctx: RequestContext): void {
  const views = pc.gpu.slotViews();
  const query = new URL(ctx.req.url ?? "/", "http://emulator").searchParams;
  if (query.get("fail_on_no_slot") === "1" && views.every((s) => s.processing)) {
    sendJson(ctx.res, 503, engineError(pc.p, 503, "no slot available"));
    return;
  }
  sendJson(
    ctx.res,
    200,
    views.map((s) => {
      const base = {
        id: s.id,
        n_ctx: pc.p.gpu.contextLength,
        speculative: false,
        is_processing: s.processing,
      };
      // A slot without a task has only these; llama-server sends next_token as a one-element array.
      if (!s.processing) return base;
      return {
        ...base,
        id_task: s.taskId,
        n_prompt_tokens: s.promptTokens,
        n_prompt_tokens_processed: s.promptTokens,
        n_prompt_tokens_cache: 0,
        params: { ...LLAMACPP_DEFAULT_PARAMS },
        next_token: [
          { has_next_token: true, has_new_line: false, n_remain: s.remaining, n_decoded: s.decoded },
        ],
      };
    }),
  );
}

function models(pc: PersonalityContext, ctx: RequestContext): void {
  const { spec } = pc.p;
  sendJson(ctx.res, 200, {
    // The Ollama-style list llama-server adds beside OpenAI's.
    models: [llamacppOllamaStyleModel(spec.name)],
    object: "list",
    data: [
      {
        id: spec.name,
        object: "model",
        created: Math.floor(ctx.core.startedAt / 1000),
        owned_by: "llamacpp",
        meta: {
          vocab_type: 2,
          n_vocab: 151_936,
          n_ctx: pc.p.gpu.contextLength,
          n_ctx_train: spec.contextLength,
          n_embd: 4096,
          n_params: spec.parameterCount,
          size: Math.round(spec.weightsMiB * 1024 * 1024),
        },
      },
    ],
  });
}

/** llama-server's own routes and aliases (personalityRoutes adds /metrics and the OpenAI routes). */
export function llamacppRoutes(pc: PersonalityContext): Record<string, Handler> {
  const health: Handler = async (ctx) => sendJson(ctx.res, 200, { status: "ok" });
  const list: Handler = async (ctx) => models(pc, ctx);
  return {
    "GET /health": health,
    "GET /v1/health": health,
    "GET /props": async (ctx) => props(pc, ctx),
    "GET /slots": async (ctx) => slots(pc, ctx),
    "GET /models": list,
    "GET /v1/models": list,
    "POST /tokenize": tokenize,
    "POST /apply-template": applyTemplate,
    "POST /chat/completions": (ctx) => personalityChat(pc, ctx),
  };
}
