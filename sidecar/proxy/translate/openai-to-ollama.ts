// An OpenAI answer (chat completion, completion, embeddings) rewritten as the Ollama answer the
// caller asked for. Pure: the clock and the model name are passed in.
import { promptReport } from "../prompt-report.js";
import type { TargetApi } from "./ollama-to-openai.js";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Which Ollama answer to build: the caller's API, and the OpenAI one it was sent as. */
export interface AnswerShape {
  api: "chat" | "generate" | "embed" | "embeddings";
  target: TargetApi;
  /** The model name the caller knows (the placed model). */
  model: string;
}

/** OpenAI's finish_reason as Ollama's done_reason (Ollama says "stop" after tool calls too). */
export function doneReason(finish: unknown): string {
  return finish === "length" ? "length" : "stop";
}

function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0;
}

/**
 * OpenAI usage → Ollama's counts; the cached share (usage.prompt_tokens_details.cached_tokens,
 * else llama.cpp's `timings.cache_n`) as Ollama's prompt_eval_cached_count, when some were.
 */
export function usageCounts(
  usage: unknown,
  timings?: unknown,
): {
  prompt_eval_count: number;
  eval_count: number;
  prompt_eval_cached_count?: number;
  prompt_eval_duration?: number;
} {
  const u = isObj(usage) ? usage : {};
  const { cachedTokens: cached, promptMs } = promptReport(usage, timings);
  // llama.cpp's prompt time (ms) as Ollama's duration (ns).
  const promptNs = Math.round(promptMs * 1e6);
  return {
    prompt_eval_count: count(u.prompt_tokens),
    eval_count: count(u.completion_tokens),
    ...(cached > 0 ? { prompt_eval_cached_count: cached } : {}),
    ...(promptNs > 0 ? { prompt_eval_duration: promptNs } : {}),
  };
}

/** OpenAI tool calls (arguments a JSON string) → Ollama's (arguments an object). */
export function ollamaToolCalls(calls: unknown): Obj[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((c, index) => {
    const fn = isObj(c) && isObj(c.function) ? c.function : {};
    let args: unknown = fn.arguments;
    if (typeof args === "string") {
      try {
        args = args.trim() === "" ? {} : JSON.parse(args);
      } catch {
        // not JSON: passed on as the engine wrote it
      }
    }
    return {
      ...(isObj(c) && typeof c.id === "string" ? { id: c.id } : {}),
      function: { index, name: typeof fn.name === "string" ? fn.name : "", arguments: args ?? {} },
    };
  });
}

function createdAt(obj: Obj, nowMs: number): string {
  const created = typeof obj.created === "number" && obj.created > 0 ? obj.created * 1000 : nowMs;
  return new Date(created).toISOString();
}

/** A whole (non-streamed) OpenAI answer as the Ollama answer. */
export function ollamaAnswer(shape: AnswerShape, obj: Obj, nowMs: number): Obj {
  if (shape.target === "openai-embed") {
    const data = (Array.isArray(obj.data) ? obj.data : []).filter(isObj);
    data.sort((a, b) => count(a.index) - count(b.index));
    const vectors = data.map((d) => (Array.isArray(d.embedding) ? d.embedding : []));
    if (shape.api === "embeddings") return { embedding: vectors[0] ?? [] };
    return {
      model: shape.model,
      embeddings: vectors,
      prompt_eval_count: usageCounts(obj.usage).prompt_eval_count,
    };
  }
  const choice = (Array.isArray(obj.choices) ? obj.choices : []).find(isObj) ?? {};
  const base = { model: shape.model, created_at: createdAt(obj, nowMs) };
  const tail = {
    done: true,
    done_reason: doneReason(choice.finish_reason),
    ...usageCounts(obj.usage, obj.timings),
  };
  if (shape.target === "completions") {
    return { ...base, response: typeof choice.text === "string" ? choice.text : "", ...tail };
  }
  const m = isObj(choice.message) ? choice.message : {};
  const content = typeof m.content === "string" ? m.content : "";
  const thinking = typeof m.reasoning_content === "string" ? m.reasoning_content : undefined;
  const calls = ollamaToolCalls(m.tool_calls);
  if (shape.api === "generate") {
    return { ...base, response: content, ...(thinking ? { thinking } : {}), ...tail };
  }
  const message: Obj = { role: "assistant", content };
  if (thinking) message.thinking = thinking;
  if (calls.length > 0) message.tool_calls = calls;
  return { ...base, message, ...tail };
}
