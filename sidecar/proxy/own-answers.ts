// Answers the proxy gives itself instead of forwarding (README.md in this folder, "Decisions"):
// Ollama's unload request (residency is the scheduler's), and a load request to a fixed-model
// engine, which always has its models loaded.
import type { CallRequest } from "./validate.js";

/** Ollama's answer to an unload request (`done_reason: "unload"`). */
export function unloadAnswer(call: CallRequest): Record<string, unknown> {
  const base = { model: call.model, created_at: new Date().toISOString() };
  if (call.api === "embed") return { model: call.model, embeddings: [] };
  if (call.api === "embeddings") return { embedding: [] };
  return call.api === "chat"
    ? { ...base, message: { role: "assistant", content: "" }, done_reason: "unload", done: true }
    : { ...base, response: "", done: true, done_reason: "unload" };
}

/** Ollama's answer to a load request (`done_reason: "load"`). */
export function loadAnswer(call: CallRequest): Record<string, unknown> {
  const answer = unloadAnswer(call);
  return "done_reason" in answer ? { ...answer, done_reason: "load" } : answer;
}
