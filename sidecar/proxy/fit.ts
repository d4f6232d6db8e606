// The fit stage of a placed call: does the prompt fit the context it will run with? Refusals are
// decided on the generous count (docs/rules/placement.md §3), or on the engine's exact count
// when it has a tokenizer route (engine-route.ts):
//   each embedding input must fit the embedding model's context (input-check.ts);
//   an OpenAI-API call (or one translated to it) cannot set num_ctx, so it must fit the
//     provider's context, or a fixed-model engine's own limit;
//   an Ollama-API call gets num_ctx by the policy (num-ctx.ts), which may refuse.
// Synchronous unless there is something to wait for (states to re-read, an exact count).
import { isFixedModelEngine } from "../../src/core/index.js";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import type { PlacedCall } from "./call-state.js";
import { providerContext } from "./catalog.js";
import { exactPromptCount, fixedContext, NO_EXACT_COUNT } from "./engine-route.js";
import { embedContext, overlongInput } from "./input-check.js";
import { applyNumCtx, decideNumCtx } from "./num-ctx.js";
import { readStates } from "./place.js";
import type { ExactCount } from "./tokenize.js";
import { OPENAI_APIS } from "./validate.js";

type Fit = KubemootError | undefined;

/** The refusal of a call that does not fit, else undefined (num_ctx applied to its body). */
export function fitCall(p: PlacedCall): Fit | Promise<Fit> {
  const { call, request, placement, state } = p;
  p.exact = exactPromptCount(call.ctx, state, placement, request, p.translation, call.signal);
  // No num_ctx on the OpenAI API, nor on an engine translated to it: it runs at its own context.
  const openai = OPENAI_APIS.has(request.api) || p.translation !== undefined;
  if (request.inputChars) return fitInputs(p, openai);
  return openai ? fitOpenAi(p) : fitNumCtx(p);
}

/** An embedding batch: every input on its own, then the call as a whole. */
async function fitInputs(p: PlacedCall, openai: boolean): Promise<Fit> {
  const { call, request, placement, state } = p;
  const states = await readStates(call.ctx);
  const context = openai
    ? fixedContext(state, placement.model, placement.contextLength)
    : placement.contextLength || providerContext(state, placement.model);
  const generous = (chars: number) => call.ctx.scheduler.promptEstimate(0, chars).generous;
  const refused = overlongInput(request, embedContext(states, placement.model, context), generous, placement);
  if (refused) return refused;
  return openai ? fitOpenAi(p) : fitNumCtx(p);
}

function fitOpenAi(p: PlacedCall): Fit | Promise<Fit> {
  // The engine's exact count when it has a tokenizer route, else the generous estimate.
  if (p.exact === NO_EXACT_COUNT) return contextRefusal(p, undefined);
  return p.exact.count.then((counted) => contextRefusal(p, counted));
}

function contextRefusal(p: PlacedCall, counted: ExactCount | undefined): Fit {
  const { placement, state, engine } = p;
  if (counted) p.exactPromptTokens = counted.tokens;
  const ctxLen = counted?.limit || fixedContext(state, placement.model, placement.contextLength);
  const need = counted?.tokens ?? p.call.estimate.generous;
  // A prompt must leave room for one token: llama.cpp and vLLM refuse one that fills the
  // context (src/engines/README.md).
  if (!(ctxLen > 0 && need >= ctxLen)) return undefined;
  const size = counted ? `${need} tokens, counted by the engine` : `at least about ${need} tokens`;
  const { model, provider } = placement;
  const message =
    p.translation || isFixedModelEngine(engine)
      ? `The prompt (${size}) does not fit the ${ctxLen}-token context of ${model} on ${provider} (engine ${engine}); send less.`
      : `The prompt (${size}) does not fit the ${ctxLen}-token context that ${model} gets on ${provider} through the OpenAI API (which cannot set num_ctx); use /api/chat, raise the provider's per-request context, or send less.`;
  return new KubemootError(ErrorCode.TooLarge, message, {
    reason: "prompt-too-large",
    detail: { model, largest_context: ctxLen, prompt_tokens: need },
  });
}

function fitNumCtx(p: PlacedCall): Fit {
  const { call, request, placement, state } = p;
  const generous = call.estimate.generous;
  const numCtx = decideNumCtx({
    policy: call.ctx.settings.numCtxPolicy,
    callerNumCtx: request.numCtx,
    contextLength: placement.contextLength || providerContext(state, placement.model),
    promptTokens: generous,
    outputTokens: request.maxOutputTokens,
  });
  p.numCtx = numCtx;
  if (numCtx.kind === "refuse") {
    return new KubemootError(ErrorCode.TooLarge, numCtx.message, {
      reason: "prompt-too-large",
      detail: { model: placement.model, largest_context: numCtx.largestContext, prompt_tokens: generous },
    });
  }
  applyNumCtx(request.body, numCtx);
  return undefined;
}
