// Validation of request bodies. Wrong types get encoding/json-style messages naming the
// field ("json: cannot unmarshal number into Go struct field ChatRequest.stream of type
// bool"); every failure is an HttpError(400).

import type { OutputFormat, ToolChoice, ToolDef } from "./answer.js";
import { DurationError, parseKeepAlive } from "./go-duration.js";
import { goKind, HttpError } from "./http-util.js";
import {
  parseFormat,
  parseReasoningEffort,
  parseResponseFormat,
  parseThink,
  parseToolChoice,
  parseTools,
} from "./request-features.js";
import type { PromptMessage } from "./tokenizer.js";

export interface RunnerOptions {
  numCtx?: number;
  numPredict?: number;
  numKeep?: number;
}

interface CommonRequest {
  model: string;
  stream: boolean;
  /** ms, Infinity = forever, undefined = the server default. */
  keepAliveMs: number | undefined;
  options: RunnerOptions;
  format: OutputFormat;
  /** undefined: not set (the emulator then does not think; see README). */
  think: boolean | undefined;
}

export interface ChatRequest extends CommonRequest {
  messages: PromptMessage[] | undefined;
  toolsJson: string | undefined;
  tools: ToolDef[];
  truncate: boolean;
}

export interface GenerateRequest extends CommonRequest {
  prompt: string;
  system: string | undefined;
  raw: boolean;
  truncate: boolean;
}

export interface OpenAIChatRequest {
  model: string;
  messages: PromptMessage[];
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | undefined;
  format: OutputFormat;
  think: boolean | undefined;
  tools: ToolDef[];
  toolsJson: string | undefined;
  toolChoice: ToolChoice;
}

function mismatch(struct: string, field: string, v: unknown, goType: string): HttpError {
  return new HttpError(
    400,
    `json: cannot unmarshal ${goKind(v)} into Go struct field ${struct}.${field} of type ${goType}`,
  );
}

function optString(body: Record<string, unknown>, struct: string, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw mismatch(struct, field, v, "string");
  return v;
}

function optBool(body: Record<string, unknown>, struct: string, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw mismatch(struct, field, v, "bool");
  return v;
}

function requireModel(body: Record<string, unknown>, struct: string): string {
  const model = optString(body, struct, "model") ?? optString(body, struct, "name");
  if (!model || model.trim() === "") throw new HttpError(400, "model is required");
  return model;
}

/** A request's keep_alive (ms; undefined when absent); a bad one is a 400 as Ollama answers it. */
export function keepAlive(body: Record<string, unknown>): number | undefined {
  try {
    return parseKeepAlive(body.keep_alive);
  } catch (err) {
    if (err instanceof DurationError) throw new HttpError(400, err.message);
    throw err;
  }
}

function intOption(opts: Record<string, unknown>, key: string): number | undefined {
  const v = opts[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new HttpError(400, `option "${key}" must be of type integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

function runnerOptions(body: Record<string, unknown>, struct: string): RunnerOptions {
  const v = body.options;
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v))
    throw mismatch(struct, "options", v, "map[string]interface {}");
  const opts = v as Record<string, unknown>;
  const numCtx = intOption(opts, "num_ctx");
  if (numCtx !== undefined && numCtx < 0)
    throw new HttpError(400, `option "num_ctx" must not be negative, got ${numCtx}`);
  const out: RunnerOptions = {};
  if (numCtx !== undefined) out.numCtx = numCtx;
  const numPredict = intOption(opts, "num_predict");
  if (numPredict !== undefined) out.numPredict = numPredict;
  const numKeep = intOption(opts, "num_keep");
  if (numKeep !== undefined) out.numKeep = numKeep;
  return out;
}

function messages(v: unknown, struct: string, openai: boolean): PromptMessage[] {
  if (!Array.isArray(v)) throw mismatch(struct, "messages", v, "[]api.Message");
  return v.map((m, i) => {
    if (typeof m !== "object" || m === null || Array.isArray(m)) {
      throw mismatch(struct, `messages`, m, openai ? "openai.Message" : "api.Message");
    }
    const msg = m as Record<string, unknown>;
    const role = msg.role ?? "";
    if (typeof role !== "string") throw mismatch(struct, `messages.role`, role, "string");
    let content = msg.content ?? "";
    if (openai && Array.isArray(content)) {
      // OpenAI content parts: keep the text parts.
      content = content
        .map((part: unknown) =>
          typeof part === "object" && part !== null && (part as Record<string, unknown>).type === "text"
            ? String((part as Record<string, unknown>).text ?? "")
            : "",
        )
        .join("");
    }
    if (typeof content !== "string") {
      throw new HttpError(
        400,
        `json: cannot unmarshal ${goKind(content)} into Go struct field Message.${struct}.messages[${i}].content of type string`,
      );
    }
    return { role, content };
  });
}

export function parseChatRequest(body: Record<string, unknown>): ChatRequest {
  const S = "ChatRequest";
  const model = requireModel(body, S);
  const stream = optBool(body, S, "stream") ?? true;
  const msgs =
    body.messages === undefined || body.messages === null ? undefined : messages(body.messages, S, false);
  const tools = parseTools(body.tools, S);
  const toolsJson = tools.length > 0 ? JSON.stringify(body.tools) : undefined;
  return {
    model,
    stream,
    keepAliveMs: keepAlive(body),
    options: runnerOptions(body, S),
    messages: msgs,
    toolsJson,
    tools,
    truncate: optBool(body, S, "truncate") ?? true,
    format: parseFormat(body.format),
    think: parseThink(body.think),
  };
}

export function parseGenerateRequest(body: Record<string, unknown>): GenerateRequest {
  const S = "GenerateRequest";
  const model = requireModel(body, S);
  return {
    model,
    stream: optBool(body, S, "stream") ?? true,
    keepAliveMs: keepAlive(body),
    options: runnerOptions(body, S),
    prompt: optString(body, S, "prompt") ?? "",
    system: optString(body, S, "system"),
    raw: optBool(body, S, "raw") ?? false,
    truncate: optBool(body, S, "truncate") ?? true,
    format: parseFormat(body.format),
    think: parseThink(body.think),
  };
}

export function parseShowRequest(body: Record<string, unknown>): string {
  return requireModel(body, "ShowRequest");
}

export function parseOpenAIChatRequest(body: Record<string, unknown>): OpenAIChatRequest {
  const S = "ChatCompletionRequest";
  const model = requireModel(body, S);
  if (body.messages === undefined || body.messages === null)
    throw new HttpError(400, "[] is too short - 'messages'");
  const msgs = messages(body.messages, S, true);
  if (msgs.length === 0) throw new HttpError(400, "[] is too short - 'messages'");
  let maxTokens: number | undefined;
  for (const key of ["max_completion_tokens", "max_tokens"]) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== "number" || !Number.isInteger(v)) throw mismatch(S, key, v, "int");
    maxTokens ??= v;
  }
  let includeUsage = false;
  const so = body.stream_options;
  if (so !== undefined && so !== null) {
    if (typeof so !== "object" || Array.isArray(so))
      throw mismatch(S, "stream_options", so, "openai.StreamOptions");
    const iu = (so as Record<string, unknown>).include_usage;
    if (iu !== undefined && typeof iu !== "boolean")
      throw mismatch(S, "stream_options.include_usage", iu, "bool");
    includeUsage = iu === true;
  }
  const tools = parseTools(body.tools, S);
  return {
    model,
    messages: msgs,
    stream: optBool(body, S, "stream") ?? false,
    includeUsage,
    maxTokens,
    format: parseResponseFormat(body.response_format),
    think: parseReasoningEffort(body),
    tools,
    toolsJson: tools.length > 0 ? JSON.stringify(body.tools) : undefined,
    toolChoice: parseToolChoice(body.tool_choice, tools),
  };
}
