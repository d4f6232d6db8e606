// Validation of the three inference bodies (Ollama /api/chat and /api/generate, OpenAI
// /v1/chat/completions): the fields the proxy reads must have the documented types, and every
// failure names its field. Unknown fields are passed through to the provider untouched.
import { type ChatMessage, type ChatToolSpec, promptChars } from "../../src/core/index.js";
import { normalizeModelName } from "../../src/engines/index.js";
import type { PromptMarks } from "../../src/scheduler/index.js";
import { badRequest } from "./http-errors.js";
import { chatMarks } from "./prompt-marks.js";

export type Api =
  | "chat"
  | "generate"
  | "openai"
  | "completions"
  | "responses"
  | "embed"
  | "embeddings"
  | "openai-embed";

/** The APIs whose routes are OpenAI's (/v1/*): SSE streams, OpenAI-shaped errors. */
export const OPENAI_APIS: ReadonlySet<Api> = new Set(["openai", "completions", "responses", "openai-embed"]);

/** The embedding APIs: one answer, no output tokens, each input checked against the context. */
export const EMBED_APIS: ReadonlySet<Api> = new Set(["embed", "embeddings", "openai-embed"]);

/** One inference call as the proxy understands it. */
export interface CallRequest {
  api: Api;
  /** The parsed body; rewritten (model, options.num_ctx) before it is forwarded. */
  body: Record<string, unknown>;
  /** The model asked for, normalised ("qwen3" → "qwen3:latest"). */
  model: string;
  stream: boolean;
  /** Characters of the prompt (docs/rules/placement.md §3 counting). */
  promptChars: number;
  /** No prompt: an Ollama load request (`{"model": m}`). */
  loadOnly: boolean;
  /** A load request with keep_alive 0: Ollama's unload. */
  unload: boolean;
  /** The caller's options.num_ctx when it set one (> 0). */
  numCtx: number | undefined;
  /** The caller's cap on output tokens (num_predict, max_tokens, max_completion_tokens); 0 = none. */
  maxOutputTokens: number;
  /** OpenAI: the caller asked for a usage chunk (stream_options.include_usage). */
  includeUsage: boolean;
  /**
   * Characters the engine's reported prompt count covers, when not `promptChars` (a batch:
   * placement checks the longest input, the engine counts them all).
   */
  learnChars?: number;
  /** Embeddings: the characters of each input, each checked against the placed context. */
  inputChars?: number[];
  /** A chat's fingerprint (prompt-marks.ts): how its conversation's turns share a prefix. */
  marks?: PromptMarks;
}

const MAX_MODEL_LENGTH = 256;

export function kind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : typeof v;
}

export function optString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw badRequest(`expected a string, got ${kind(v)}`, where);
  return v;
}

export function optBool(obj: Record<string, unknown>, key: string, where: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw badRequest(`expected true or false, got ${kind(v)}`, where);
  return v;
}

export function optInt(obj: Record<string, unknown>, key: string, where: string): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    throw badRequest(`expected an integer, got ${typeof v === "number" ? String(v) : kind(v)}`, where);
  }
  return v;
}

export function optArray(obj: Record<string, unknown>, key: string, where: string): unknown[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw badRequest(`expected an array, got ${kind(v)}`, where);
  return v;
}

export function optObject(
  obj: Record<string, unknown>,
  key: string,
  where: string,
): Record<string, unknown> | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v))
    throw badRequest(`expected an object, got ${kind(v)}`, where);
  return v as Record<string, unknown>;
}

export function requireModel(body: Record<string, unknown>): string {
  const raw = optString(body, "model", "model") ?? optString(body, "name", "name");
  if (raw === undefined || raw.trim() === "") throw badRequest("is required", "model");
  if (raw.length > MAX_MODEL_LENGTH) throw badRequest(`longer than ${MAX_MODEL_LENGTH} characters`, "model");
  return normalizeModelName(raw);
}

const GO_UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A Go duration ("5m", "1h30m", "-1s", "0") in ms; undefined when it is not one. */
export function goDurationMs(text: string): number | undefined {
  const s = text.trim();
  if (s === "0" || s === "+0" || s === "-0") return 0;
  const m = /^([-+]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(s);
  if (!m) return undefined;
  let total = 0;
  for (const part of (m[2] as string).matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    total += Number(part[1]) * (GO_UNIT_MS[part[2] as string] ?? 0);
  }
  return m[1] === "-" ? -total : total;
}

/** keep_alive: a number of seconds or a Go duration string; returns its ms (negative = forever). */
export function keepAliveMs(body: Record<string, unknown>): number | undefined {
  const v = body.keep_alive;
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw badRequest("expected a finite number of seconds", "keep_alive");
    return v * 1000;
  }
  if (typeof v === "string") {
    const ms = goDurationMs(v);
    if (ms === undefined) {
      throw badRequest(`expected a duration like "5m" or a number of seconds, got "${v}"`, "keep_alive");
    }
    return ms;
  }
  throw badRequest(`expected a number or a duration string, got ${kind(v)}`, "keep_alive");
}

interface RunnerOptions {
  numCtx: number | undefined;
  numPredict: number | undefined;
}

export function runnerOptions(body: Record<string, unknown>): RunnerOptions {
  const opts = optObject(body, "options", "options");
  if (!opts) return { numCtx: undefined, numPredict: undefined };
  const numCtx = optInt(opts, "num_ctx", "options.num_ctx");
  if (numCtx !== undefined && numCtx < 0)
    throw badRequest(`must not be negative, got ${numCtx}`, "options.num_ctx");
  const numPredict = optInt(opts, "num_predict", "options.num_predict");
  optInt(opts, "num_keep", "options.num_keep");
  return { numCtx: numCtx && numCtx > 0 ? numCtx : undefined, numPredict };
}

export function checkTools(body: Record<string, unknown>): ChatToolSpec[] | undefined {
  const tools = optArray(body, "tools", "tools");
  tools?.forEach((t, i) => {
    if (typeof t !== "object" || t === null || Array.isArray(t)) {
      throw badRequest(`expected an object, got ${kind(t)}`, `tools[${i}]`);
    }
    optObject(t as Record<string, unknown>, "function", `tools[${i}].function`);
  });
  return tools as ChatToolSpec[] | undefined;
}

function checkToolCalls(msg: Record<string, unknown>, where: string): void {
  const calls = optArray(msg, "tool_calls", `${where}.tool_calls`);
  calls?.forEach((c, j) => {
    if (typeof c !== "object" || c === null || Array.isArray(c)) {
      throw badRequest(`expected an object, got ${kind(c)}`, `${where}.tool_calls[${j}]`);
    }
  });
}

export function checkMessages(list: unknown[], openai: boolean): ChatMessage[] {
  list.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (typeof m !== "object" || m === null || Array.isArray(m)) {
      throw badRequest(`expected an object, got ${kind(m)}`, where);
    }
    const msg = m as Record<string, unknown>;
    const role = optString(msg, "role", `${where}.role`);
    if (openai && (role === undefined || role === "")) throw badRequest("is required", `${where}.role`);
    const content = msg.content;
    if (openai && Array.isArray(content)) {
      content.forEach((part, j) => {
        if (typeof part !== "object" || part === null || Array.isArray(part)) {
          throw badRequest(`expected a content part object, got ${kind(part)}`, `${where}.content[${j}]`);
        }
        optString(part as Record<string, unknown>, "text", `${where}.content[${j}].text`);
      });
    } else {
      optString(msg, "content", `${where}.content`);
    }
    optString(msg, "name", `${where}.name`);
    optString(msg, "tool_name", `${where}.tool_name`);
    if (!openai) optArray(msg, "images", `${where}.images`);
    checkToolCalls(msg, where);
  });
  return list as ChatMessage[];
}

export function isUnload(loadOnly: boolean, keepAlive: number | undefined): boolean {
  return loadOnly && keepAlive === 0;
}

/** POST /api/chat. */
export function parseChat(body: Record<string, unknown>): CallRequest {
  const model = requireModel(body);
  const stream = optBool(body, "stream", "stream") ?? true;
  const list = optArray(body, "messages", "messages");
  const messages = list ? checkMessages(list, false) : [];
  const tools = checkTools(body);
  const opts = runnerOptions(body);
  const keepAlive = keepAliveMs(body);
  optBool(body, "think", "think");
  const loadOnly = messages.length === 0;
  return {
    api: "chat",
    body,
    model,
    stream,
    promptChars: promptChars(messages, tools),
    ...(loadOnly ? {} : { marks: chatMarks(messages, tools) }),
    loadOnly,
    unload: isUnload(loadOnly, keepAlive),
    numCtx: opts.numCtx,
    maxOutputTokens: opts.numPredict && opts.numPredict > 0 ? opts.numPredict : 0,
    includeUsage: false,
  };
}

/** POST /api/generate. */
export function parseGenerate(body: Record<string, unknown>): CallRequest {
  const model = requireModel(body);
  const stream = optBool(body, "stream", "stream") ?? true;
  const prompt = optString(body, "prompt", "prompt") ?? "";
  const system = optString(body, "system", "system") ?? "";
  const suffix = optString(body, "suffix", "suffix") ?? "";
  optBool(body, "raw", "raw");
  optArray(body, "images", "images");
  const opts = runnerOptions(body);
  const keepAlive = keepAliveMs(body);
  const loadOnly = prompt === "";
  return {
    api: "generate",
    body,
    model,
    stream,
    promptChars: loadOnly ? 0 : prompt.length + system.length + suffix.length,
    loadOnly,
    unload: isUnload(loadOnly, keepAlive),
    numCtx: opts.numCtx,
    maxOutputTokens: opts.numPredict && opts.numPredict > 0 ? opts.numPredict : 0,
    includeUsage: false,
  };
}

/** POST /v1/chat/completions. */
export function parseOpenAIChat(body: Record<string, unknown>): CallRequest {
  const model = requireModel(body);
  const stream = optBool(body, "stream", "stream") ?? false;
  const list = optArray(body, "messages", "messages");
  if (!list || list.length === 0) throw badRequest("at least one message is required", "messages");
  const messages = checkMessages(list, true);
  const tools = checkTools(body);
  let maxOutputTokens = 0;
  for (const key of ["max_completion_tokens", "max_tokens"]) {
    const v = optInt(body, key, key);
    if (v === undefined) continue;
    if (v < 0) throw badRequest(`must not be negative, got ${v}`, key);
    if (maxOutputTokens === 0) maxOutputTokens = v;
  }
  const so = optObject(body, "stream_options", "stream_options");
  const includeUsage = so ? (optBool(so, "include_usage", "stream_options.include_usage") ?? false) : false;
  return {
    api: "openai",
    body,
    model,
    stream,
    promptChars: promptChars(messages, tools),
    marks: chatMarks(messages, tools),
    loadOnly: false,
    unload: false,
    numCtx: undefined,
    maxOutputTokens,
    includeUsage,
  };
}
