// llama-server's own completion route, POST /completion (and /completions), in its shapes
// (src/engines/README.md): a prompt as text or token ids, n_predict, cache_prompt, id_slot and
// sampling; the answer carries tokens_predicted, tokens_evaluated, tokens_cached (what the slot
// holds afterwards), stop_type, truncated and timings (cache_n: prompt tokens reused).
import type { Token } from "node-llama-cpp";
import { invalidArgument } from "../errors/index.js";
import { answerTask, type TaskOutput } from "./answer.js";
import type { Handler } from "./http.js";
import type { EngineModel } from "./model-set.js";
import { boolField, type GenerationParams, readGenerationParams, samplingJson } from "./request-params.js";
import { resolveModel, timings, tokenIds, tokenize } from "./task.js";

function promptTokens(m: EngineModel, v: unknown): Token[] {
  if (typeof v === "string") return tokenize(m, v, true, true);
  if (Array.isArray(v) && v.every((t) => typeof t === "number")) return tokenIds(m, v, "prompt");
  throw invalidArgument("prompt", "must be a string or a list of token ids (one prompt per request)");
}

function settings(m: EngineModel, p: GenerationParams): Record<string, unknown> {
  return { ...samplingJson(p.sampling, p.nPredict, p.stream), n_ctx: m.nCtx, stop: p.stop };
}

export const completionRoute: Handler = async (r) => {
  const body = await r.body();
  const m = resolveModel(r.state, body.model);
  const prompt = promptTokens(m, body.prompt);
  const params = readGenerationParams(body);
  const returnTokens = boolField(body, "return_tokens", false);
  const common = (out: TaskOutput) => ({ index: 0, id_slot: out.idSlot, model: m.id });
  const final = (out: TaskOutput, content: string, tokens: readonly Token[]) => ({
    ...common(out),
    content,
    tokens: returnTokens ? tokens : [],
    stop: true,
    tokens_predicted: out.predictedN,
    tokens_evaluated: out.nPrompt,
    generation_settings: settings(m, params),
    prompt: m.model.detokenize(prompt, true),
    has_new_line: out.hasNewLine,
    truncated: out.truncated,
    stop_type: out.stopType,
    stopping_word: out.stoppingWord,
    tokens_cached: out.tokensCached,
    timings: timings(out),
  });
  let predicted = 0;
  await answerTask(r, m, prompt, params, {
    piece: (content, tokens) => {
      predicted += tokens.length;
      return {
        index: 0,
        content,
        tokens: returnTokens ? tokens : [],
        stop: false,
        tokens_predicted: predicted,
        tokens_evaluated: prompt.length,
      };
    },
    tail: (out) => [final(out, "", [])],
    whole: (out) => final(out, out.content, out.tokens),
    done: false,
  });
};
