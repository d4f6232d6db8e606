// The provider route each proxied API is forwarded to, and how to tell an engine that does not
// serve a route from one that does not have the model.
import type { Api } from "./validate.js";

export const PATHS: Record<Api, string> = {
  chat: "/api/chat",
  generate: "/api/generate",
  openai: "/v1/chat/completions",
  completions: "/v1/completions",
  responses: "/v1/responses",
  embed: "/api/embed",
  embeddings: "/api/embeddings",
  "openai-embed": "/v1/embeddings",
};

/**
 * A 404 or 405 that is no JSON error is the engine's router saying it has no such route (Go's
 * "404 page not found", FastAPI's {"detail": "Not Found"}), not that the model is missing
 * (which Ollama answers as {"error"}, vLLM as a top-level {"object": "error", "message"}).
 */
export function routeNotServed(status: number, text: string): boolean {
  if (status !== 404 && status !== 405) return false;
  try {
    const v = JSON.parse(text) as { error?: unknown; object?: unknown };
    return v?.error === undefined && v?.object !== "error";
  } catch {
    return true;
  }
}
