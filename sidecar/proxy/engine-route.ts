// What the placed provider's engine changes for a call (docs/rules/engines.md): an Ollama-API
// call to an OpenAI-only engine is translated (translate/), a fixed-model engine's own context
// limit bounds the prompt, and an engine with a tokenizer route gives the exact prompt count.
import type { Engine, ProviderState } from "../../src/core/index.js";
import { DEFAULT_ENGINE, isFixedModelEngine, speaksOpenAiOnly } from "../../src/core/index.js";
import type { CallContext } from "./call-context.js";
import {
  askEngineCount,
  type ExactCount,
  type TokenizeInput,
  tokenizeKey,
  tokenizeRequests,
} from "./tokenize.js";
import { type Translation, translateCall } from "./translate/index.js";
import type { CallRequest } from "./validate.js";

/** A held exact prompt count; `release` ends the hold (tokenize.ts). */
export interface ExactHold {
  count: Promise<ExactCount | undefined>;
  release: () => void;
}

/** No exact count: nothing to wait for, nothing to release. */
export const NO_EXACT_COUNT: ExactHold = { count: Promise.resolve(undefined), release: () => undefined };

export function engineOf(state: ProviderState | undefined): Engine {
  return state?.engine ?? DEFAULT_ENGINE;
}

/** The translation of an Ollama-API call placed on an OpenAI-only engine, else undefined. */
export function translationFor(call: CallRequest, engine: Engine, model: string): Translation | undefined {
  if (!speaksOpenAiOnly(engine)) return undefined;
  return translateCall(call.api, { ...call.body, model }, engine, model);
}

/**
 * The context a call runs with on an engine that cannot take num_ctx (the OpenAI API, or a
 * fixed-model engine): a fixed-model engine's own limit for the model, else the provider's.
 */
export function fixedContext(state: ProviderState | undefined, model: string, placed: number): number {
  if (state && isFixedModelEngine(state.engine)) {
    return state.loadedModelContextLengths?.[model] || state.contextLength || placed;
  }
  return state?.contextLength || placed;
}

/** What the engine's tokenizer is asked to count for this call; undefined = nothing exact. */
function tokenizeInput(call: CallRequest, t: Translation | undefined): TokenizeInput | undefined {
  const body = t?.body ?? call.body;
  const target = t?.target ?? call.api;
  if (target === "openai" && Array.isArray(body.messages)) {
    return {
      kind: "chat",
      messages: body.messages,
      ...(Array.isArray(body.tools) ? { tools: body.tools } : {}),
    };
  }
  if (target === "completions" && typeof body.prompt === "string")
    return { kind: "prompt", prompt: body.prompt };
  return undefined; // embeddings, batches, the Responses API: the estimate decides
}

/**
 * The engine's exact prompt count when its state says it has a tokenizer route, shared through
 * the proxy's cache while the call holds it (call `release` when the call ends).
 */
export function exactPromptCount(
  ctx: CallContext,
  state: ProviderState | undefined,
  placed: { endpoint: string; model: string },
  call: CallRequest,
  t: Translation | undefined,
  signal: AbortSignal,
): ExactHold {
  if (state?.tokenize !== true || call.loadOnly) return NO_EXACT_COUNT;
  const { endpoint, model } = placed;
  const input = tokenizeInput(call, t);
  const requests = input && tokenizeRequests(engineOf(state), model, input);
  if (!input || !requests) return NO_EXACT_COUNT;
  const ask = () => askEngineCount(ctx.dispatcher, endpoint, requests, signal);
  if (!ctx.tokenCounts) return { count: ask(), release: () => undefined };
  return ctx.tokenCounts.hold(tokenizeKey(endpoint, model, input), ask);
}
