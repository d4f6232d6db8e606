// SGLang's server as the emulator plays it (src/engines/README.md): one model whatever the
// request names, /get_model_info and /get_server_info (and their newer names /model_info and
// /server_info), /health, /metrics in sglang: names and /tokenize ({prompt} → {tokens, count,
// max_model_len}).

import { sendJson, sendText } from "../../net/index.js";
import type { RequestContext } from "../core.js";
import { readRequestBody } from "../core.js";
import { HttpError, parseJsonBody } from "../http-util.js";
import { type Handler, openaiModelEntry, type PersonalityContext } from "./openai-routes.js";
import { GPU_MEMORY_UTILIZATION } from "./personality.js";
import { tokenIds, tokenizePieces } from "./tokens.js";

/** What /get_server_info reports as version per --engine-version. */
export const SGLANG_VERSIONS = { current: "0.5.3", legacy: "0.4.6" } as const;

async function tokenize(pc: PersonalityContext, ctx: RequestContext): Promise<void> {
  const body = parseJsonBody(await readRequestBody(ctx), "TokenizeRequest");
  const max = pc.p.gpu.contextLength;
  const special = body.add_special_tokens === true;
  const one = (text: string) => {
    const pieces = tokenizePieces(text);
    if (special) pieces.unshift("<|bos|>");
    return tokenIds(pieces);
  };
  if (typeof body.prompt === "string") {
    const tokens = one(body.prompt);
    sendJson(ctx.res, 200, { tokens, count: tokens.length, max_model_len: max });
  } else if (Array.isArray(body.prompt) && body.prompt.every((x) => typeof x === "string")) {
    const tokens = (body.prompt as string[]).map(one);
    sendJson(ctx.res, 200, { tokens, count: tokens.map((t) => t.length), max_model_len: max });
  } else {
    throw new HttpError(400, `Invalid prompt type: ${typeof body.prompt}. Expected str or List[str].`);
  }
}

function modelInfo(pc: PersonalityContext, ctx: RequestContext): void {
  const { spec } = pc.p;
  sendJson(ctx.res, 200, {
    model_path: spec.name,
    tokenizer_path: spec.name,
    is_generation: spec.capabilities.includes("completion"),
    preferred_sampling_params: null,
    weight_version: "default",
    has_image_understanding: false,
    has_audio_understanding: false,
    model_type: spec.family,
    architectures: [`${spec.family}ForCausalLM`],
  });
}

function serverInfo(pc: PersonalityContext, ctx: RequestContext): void {
  const { p } = pc;
  const args = {
    model_path: p.spec.name,
    tokenizer_path: p.spec.name,
    served_model_name: p.spec.name,
    context_length: p.contextLengthSet ? p.gpu.contextLength : null,
    is_embedding: !p.spec.capabilities.includes("completion"),
    mem_fraction_static: GPU_MEMORY_UTILIZATION,
    max_running_requests: p.gpu.slots,
    max_queued_requests: null,
    max_total_tokens: null,
    schedule_policy: "fcfs",
    host: ctx.core.config.host,
    port: ctx.core.config.port,
    enable_metrics: true,
  };
  sendJson(ctx.res, 200, {
    ...args,
    status: "ready",
    max_total_num_tokens: p.gpu.kvCapacityTokens,
    max_req_input_len: p.gpu.contextLength - 6,
    internal_states: [{ ...args, last_gen_throughput: 0 }],
    version: SGLANG_VERSIONS[p.version],
  });
}

function models(pc: PersonalityContext, ctx: RequestContext): void {
  sendJson(ctx.res, 200, { object: "list", data: [openaiModelEntry(pc, ctx, "sglang")] });
}

/** SGLang's own routes, old and new names (personalityRoutes adds /metrics and the OpenAI routes). */
export function sglangRoutes(pc: PersonalityContext): Record<string, Handler> {
  const ok: Handler = async (ctx) => sendText(ctx.res, 200, "");
  const info: Handler = async (ctx) => modelInfo(pc, ctx);
  const server: Handler = async (ctx) => serverInfo(pc, ctx);
  const tok: Handler = (ctx) => tokenize(pc, ctx);
  return {
    "GET /health": ok,
    "GET /health_generate": ok,
    "GET /get_model_info": info,
    "GET /model_info": info,
    "GET /get_server_info": server,
    "GET /server_info": server,
    "GET /v1/models": async (ctx) => models(pc, ctx),
    "POST /tokenize": tok,
    "POST /v1/tokenize": tok,
  };
}
