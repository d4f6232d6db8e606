// Embedding batches: every input is embedded on its own, so every input must fit the context
// the placed copy runs with. An engine truncates an over-long input silently (Ollama's
// `truncate` defaults to true), so the proxy refuses it instead, naming the input.
import type { ProviderState } from "../../src/core/index.js";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { CallRequest } from "./validate.js";

/** The refusal for the first input whose generous token count exceeds `contextLength`. */
export function overlongInput(
  call: CallRequest,
  contextLength: number,
  generousTokens: (chars: number) => number,
  where: { model: string; provider: string },
): KubemootError | undefined {
  if (!call.inputChars || !(contextLength > 0)) return undefined;
  for (let i = 0; i < call.inputChars.length; i++) {
    const tokens = generousTokens(call.inputChars[i] as number);
    if (tokens <= contextLength) continue;
    const field = call.api === "embeddings" ? "prompt" : call.inputChars.length > 1 ? `input[${i}]` : "input";
    return new KubemootError(
      ErrorCode.TooLarge,
      `${field}: at least about ${tokens} tokens, more than the ${contextLength}-token context ${where.model} runs with on ${where.provider}; the engine would cut it silently. Split it or send less.`,
      {
        reason: "prompt-too-large",
        field,
        detail: { model: where.model, largest_context: contextLength, prompt_tokens: tokens },
      },
    );
  }
  return undefined;
}

/**
 * The context an embedding model runs with: the placement's, or less when some provider has
 * the model loaded with less. An engine clamps an embedding model's context to the one it was
 * trained with, and the proxy pins num_ctx, so a smaller loaded context is that limit — on every
 * GPU, the cold ones included.
 */
export function embedContext(
  states: readonly ProviderState[] | undefined,
  model: string,
  placed: number,
): number {
  let out = placed > 0 ? placed : Number.POSITIVE_INFINITY;
  for (const s of states ?? []) {
    const c = s.loadedModelContextLengths?.[model];
    if (c !== undefined && c > 0 && c < out) out = c;
  }
  return Number.isFinite(out) ? out : 0;
}
