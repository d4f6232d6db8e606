// The parse stage of a proxied call: the body as the route's API (validate.ts,
// validate-surface.ts) and the X-Kubemoot-* headers (kubemoot-headers.ts); an unload request is
// answered here and goes no further.
import type { ProxyCall } from "./call-state.js";
import { type CallHeaders, parseCallHeaders } from "./kubemoot-headers.js";
import { unloadAnswer } from "./own-answers.js";
import { type Api, type CallRequest, parseChat, parseGenerate, parseOpenAIChat } from "./validate.js";
import {
  parseEmbed,
  parseLegacyEmbeddings,
  parseOpenAICompletion,
  parseOpenAIEmbed,
  parseResponses,
} from "./validate-surface.js";

const PARSERS: Record<Api, (body: Record<string, unknown>) => CallRequest> = {
  chat: parseChat,
  generate: parseGenerate,
  openai: parseOpenAIChat,
  completions: parseOpenAICompletion,
  responses: parseResponses,
  embed: parseEmbed,
  embeddings: parseLegacyEmbeddings,
  "openai-embed": parseOpenAIEmbed,
};

/**
 * The call's request (also set on the call) and headers; undefined once answered (an unload).
 * Throws bad-request naming the field.
 */
export function parseCall(
  call: ProxyCall,
  body: Record<string, unknown>,
): { request: CallRequest; headers: CallHeaders } | undefined {
  const request = PARSERS[call.api](body);
  const headers = parseCallHeaders(call.req.headers);
  call.request = request;
  if (request.unload) {
    // Residency is the scheduler's: a caller's unload would pull a copy from under others.
    call.answer(unloadAnswer(request));
    return undefined;
  }
  return { request, headers };
}
