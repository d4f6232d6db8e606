// The engine's read-only routes in llama-server's shapes (src/engines/README.md):
// /health, /props (per-slot n_ctx, total_slots; ?model= picks a model as router mode does),
// /v1/models (meta with the real vocabulary, context and size), /slots (fail_on_no_slot=1
// answers 503 when every slot is busy) and /metrics (always on here; llama-server needs
// --metrics).
import { LLAMACPP_DEFAULT_PARAMS, llamacppOllamaStyleModel } from "../engines/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { sendJson, sendText } from "../net/index.js";
import type { EngineRequest, Handler } from "./http.js";
import type { EngineModel } from "./model-set.js";
import { resolveModel } from "./task.js";

function modelFor(r: EngineRequest): EngineModel {
  const name = r.url.searchParams.get("model");
  return name === null ? r.state.models[0]! : resolveModel(r.state, name);
}

const props: Handler = async (r) => {
  const m = modelFor(r);
  sendJson(r.res, 200, {
    default_generation_settings: { n_ctx: m.nCtx, params: { ...LLAMACPP_DEFAULT_PARAMS } },
    total_slots: m.pool.slots.length,
    model_alias: m.id,
    model_path: m.file,
    modalities: { vision: false, audio: false },
    endpoint_slots: true,
    endpoint_props: false,
    endpoint_metrics: true,
    chat_template: m.template.source,
    bos_token: m.model.tokens.bosString ?? "",
    eos_token: m.model.tokens.eosString ?? "",
    build_info: r.state.buildInfo,
    is_sleeping: false,
  });
};

const models: Handler = async (r) => {
  const created = r.state.startedAtS;
  sendJson(r.res, 200, {
    // The Ollama-style list llama-server adds beside OpenAI's.
    models: r.state.models.map((m) => llamacppOllamaStyleModel(m.id)),
    object: "list",
    data: r.state.models.map((m) => ({
      id: m.id,
      object: "model",
      created,
      owned_by: "llamacpp",
      meta: { ...m.meta, n_ctx: m.nCtx },
    })),
  });
};

const slots: Handler = async (r) => {
  const m = modelFor(r);
  if (r.url.searchParams.get("fail_on_no_slot") && m.pool.slots.every((s) => s.processing)) {
    throw new KubemootError(ErrorCode.Busy, "no slot available");
  }
  sendJson(
    r.res,
    200,
    m.pool.slots.map((s) => {
      const base = { id: s.id, n_ctx: m.nCtx, speculative: false, is_processing: s.processing };
      const t = s.task;
      if (!t) return base;
      return {
        ...base,
        id_task: t.idTask,
        n_prompt_tokens: t.nPrompt,
        n_prompt_tokens_processed: t.nProcessed,
        n_prompt_tokens_cache: t.nCache,
        params: t.params,
        next_token: [
          {
            has_next_token: s.processing,
            has_new_line: t.hasNewLine,
            n_remain: t.nRemain,
            n_decoded: t.nDecoded,
          },
        ],
      };
    }),
  );
};

const health: Handler = async (r) => sendJson(r.res, 200, { status: "ok" });

const metrics: Handler = async (r) => {
  const m = await r.state.metrics.render();
  sendText(r.res, 200, m.text, m.contentType);
};

export const INFO_ROUTES: Record<string, Handler> = {
  "GET /health": health,
  "GET /v1/health": health,
  "GET /props": props,
  "GET /models": models,
  "GET /v1/models": models,
  "GET /slots": slots,
  "GET /metrics": metrics,
};
