// vLLM's OpenAI-compatible server as the emulator plays it (src/engines/README.md): one model,
// /v1/models with max_model_len, /health, /version, /tokenize (prompt or chat messages) and
// /metrics in vLLM's names.

import { sendJson, sendText } from "../../net/index.js";
import type { RequestContext } from "../core.js";
import { readRequestBody } from "../core.js";
import { HttpError, parseJsonBody } from "../http-util.js";
import { parseOpenAIChatRequest } from "../requests.js";
import { type Handler, openaiModelEntry, type PersonalityContext, servedModel } from "./openai-routes.js";
import { renderChat, tokenIds, tokenizePieces } from "./tokens.js";

/** What GET /version reports per --engine-version. */
export const VLLM_VERSIONS = { current: "0.10.1", legacy: "0.8.5" } as const;

async function tokenize(pc: PersonalityContext, ctx: RequestContext): Promise<void> {
  const body = parseJsonBody(await readRequestBody(ctx), "TokenizeRequest");
  servedModel(pc, body.model);
  let pieces: string[];
  if (body.messages !== undefined) {
    const req = parseOpenAIChatRequest({ ...body, model: pc.p.spec.name });
    pieces = tokenizePieces(renderChat(req.messages, req.toolsJson, body.add_generation_prompt !== false));
  } else if (typeof body.prompt === "string") {
    pieces = tokenizePieces(body.prompt);
  } else {
    throw new HttpError(400, "Either `prompt` (a string) or `messages` is required.");
  }
  const answer: Record<string, unknown> = {
    count: pieces.length,
    max_model_len: pc.p.gpu.contextLength,
    tokens: tokenIds(pieces),
  };
  if (body.return_token_strs === true) answer.token_strs = pieces;
  sendJson(ctx.res, 200, answer);
}

function models(pc: PersonalityContext, ctx: RequestContext): void {
  const entry = openaiModelEntry(pc, ctx, "vllm");
  sendJson(ctx.res, 200, {
    object: "list",
    data: [
      {
        ...entry,
        permission: [
          {
            id: `modelperm-${ctx.core.config.port}`,
            object: "model_permission",
            created: entry.created,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: "*",
            group: null,
            is_blocking: false,
          },
        ],
      },
    ],
  });
}

/** vLLM's own routes (personalityRoutes adds /metrics and the OpenAI routes). */
export function vllmRoutes(pc: PersonalityContext): Record<string, Handler> {
  return {
    "GET /health": async (ctx) => sendText(ctx.res, 200, ""),
    "GET /version": async (ctx) => sendJson(ctx.res, 200, { version: VLLM_VERSIONS[pc.p.version] }),
    "GET /v1/models": async (ctx) => models(pc, ctx),
    "POST /tokenize": (ctx) => tokenize(pc, ctx),
  };
}
