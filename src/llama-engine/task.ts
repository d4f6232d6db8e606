// One inference task (docs/rules/engines.md "A real llama.cpp engine"): the model and prompt
// resolved, the length checked before anything is evaluated (a prompt that leaves no room for a
// token is llama.cpp's exceed_context_size_error, never a silent cut), a slot taken or waited
// for, the generation run there, and the slot freed for the next deferred request.
import type { Token } from "node-llama-cpp";
import { ErrorCode, invalidArgument, KubemootError } from "../errors/index.js";
import { type GenerationOutput, generate, type OnPiece } from "./generation.js";
import type { EngineRequest, EngineState } from "./http.js";
import type { EngineModel } from "./model-set.js";
import { type GenerationParams, samplingJson } from "./request-params.js";
import { exceedContext } from "./wire.js";

/** The model a request names: the only one when there is one (llama-server ignores the name then). */
export function resolveModel(state: EngineState, name: unknown): EngineModel {
  const { models } = state;
  if (models.length === 1) return models[0]!;
  if (name === undefined || name === null || name === "")
    throw invalidArgument("model", "model name is missing from the request");
  if (typeof name !== "string") throw invalidArgument("model", "must be a string");
  const found = models.find((m) => m.id === name);
  if (!found) throw new KubemootError(ErrorCode.NotFound, `model '${name}' not found`);
  return found;
}

/** Text to tokens as llama.cpp's tokenizer gives them; add_special prepends BOS where the model wants it. */
export function tokenize(m: EngineModel, text: string, addSpecial: boolean, parseSpecial: boolean): Token[] {
  const tokens = m.model.tokenize(text, parseSpecial);
  const bos = m.model.tokens.bos;
  if (addSpecial && bos !== null && m.model.tokens.shouldPrependBosToken) tokens.unshift(bos);
  return tokens;
}

/** Token ids given in a request, each checked against the vocabulary. */
export function tokenIds(m: EngineModel, v: unknown, field: string): Token[] {
  if (!Array.isArray(v)) throw invalidArgument(field, "must be a list of token ids");
  const n = m.meta.n_vocab;
  return v.map((t, i) => {
    if (typeof t !== "number" || !Number.isInteger(t) || t < 0 || t >= n)
      throw invalidArgument(`${field}[${i}]`, `must be a token id from 0 to ${n - 1}`);
    return t as Token;
  });
}

/** Runs `prompt` on `m`: checked, queued for a slot, generated, observed. */
export async function runTask(
  r: EngineRequest,
  m: EngineModel,
  prompt: Token[],
  params: GenerationParams,
  onPiece: OnPiece,
): Promise<GenerationOutput & { idSlot: number }> {
  if (prompt.length === 0) throw invalidArgument("prompt", "the prompt is empty");
  if (prompt.length >= m.nCtx) throw exceedContext(prompt.length, m.nCtx);
  const slot = await m.pool.acquire(prompt, params.idSlot, r.signal);
  const task = {
    idTask: r.state.nextTaskId(),
    nPrompt: prompt.length,
    nProcessed: 0,
    nCache: 0,
    nDecoded: 0,
    nRemain: params.nPredict,
    hasNewLine: false,
    params: samplingJson(params.sampling, params.nPredict, params.stream),
  };
  slot.task = task;
  try {
    const out = await generate(
      { model: m.model, slot, prompt, nCtx: m.nCtx, params, signal: r.signal },
      (text, tokens) => {
        task.nDecoded += tokens.length;
        if (params.nPredict >= 0) task.nRemain = params.nPredict - task.nDecoded;
        if (text.includes("\n")) task.hasNewLine = true;
        return onPiece(text, tokens);
      },
    );
    Object.assign(task, { nProcessed: out.promptN, nCache: out.cacheN, nDecoded: out.predictedN });
    r.state.observe(out);
    return { ...out, idSlot: slot.id };
  } finally {
    m.pool.release(slot, Date.now());
  }
}

/** llama.cpp's `timings` object of an answer. */
export function timings(g: GenerationOutput): Record<string, number> {
  const per = (ms: number, n: number) => (n > 0 ? ms / n : 0);
  const rate = (ms: number, n: number) => (ms > 0 ? (n / ms) * 1e3 : 0);
  return {
    cache_n: g.cacheN,
    prompt_n: g.promptN,
    prompt_ms: g.promptMs,
    prompt_per_token_ms: per(g.promptMs, g.promptN),
    prompt_per_second: rate(g.promptMs, g.promptN),
    predicted_n: g.predictedN,
    predicted_ms: g.predictedMs,
    predicted_per_token_ms: per(g.predictedMs, g.predictedN),
    predicted_per_second: rate(g.predictedMs, g.predictedN),
  };
}
