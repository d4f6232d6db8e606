// Ollama-API calls served by engines that speak only OpenAI's API: the request rewritten on
// the way in, the answer (whole or streamed) on the way out. Pure; forward.ts applies it.
import type { Engine } from "../../../src/core/index.js";
import type { FrameTap } from "../framing.js";
import type { Api } from "../validate.js";
import { type TargetApi, translateRequest } from "./ollama-to-openai.js";
import { ollamaAnswer } from "./openai-to-ollama.js";
import { sseToNdjsonTap } from "./stream.js";

/** How one translated call is sent and how its answer comes back. */
export interface Translation {
  /** The OpenAI API the call is sent to. */
  target: TargetApi;
  /** The body to send. */
  body: Record<string, unknown>;
  /** The caller's fields with no equivalent (X-Kubemoot-Dropped). */
  dropped: string[];
  /** A streamed answer: SSE in, NDJSON out. */
  streamTap(): FrameTap;
  /** A whole answer. */
  answer(obj: Record<string, unknown>): Record<string, unknown>;
}

/** The translation of an Ollama-API call for `engine`; undefined for an OpenAI-API call. */
export function translateCall(
  api: Api,
  body: Record<string, unknown>,
  engine: Engine,
  model: string,
): Translation | undefined {
  if (api !== "chat" && api !== "generate" && api !== "embed" && api !== "embeddings") return undefined;
  const t = translateRequest(api, body, engine);
  if (!t) return undefined;
  const shape = { api, target: t.target, model };
  return {
    ...t,
    streamTap: () => sseToNdjsonTap(shape),
    answer: (obj) => ollamaAnswer(shape, obj, Date.now()),
  };
}
