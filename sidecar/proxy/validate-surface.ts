// Validation of the rest of the inference surface: OpenAI /v1/completions and /v1/responses,
// and the three embedding routes (Ollama /api/embed and legacy /api/embeddings, OpenAI
// /v1/embeddings). As in validate.ts: the fields the proxy reads must have their documented
// types, every failure names its field, everything else passes through untouched.
import { badRequest } from "./http-errors.js";
import {
  type CallRequest,
  isUnload,
  keepAliveMs,
  kind,
  optArray,
  optBool,
  optInt,
  optObject,
  optString,
  requireModel,
  runnerOptions,
} from "./validate.js";

/** A token id stands for about this many characters (prompts given as token arrays). */
const CHARS_PER_TOKEN_ID = 4;

/**
 * A prompt or input that may be one text or a batch: a string, an array of strings, an array
 * of token ids, or an array of token-id arrays. The characters of each item.
 */
function textBatch(v: unknown, where: string): number[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return [v.length];
  if (!Array.isArray(v)) throw badRequest(`expected a string or an array, got ${kind(v)}`, where);
  if (v.length > 0 && v.every((x) => typeof x === "number")) return [v.length * CHARS_PER_TOKEN_ID];
  return v.map((x, i) => {
    if (typeof x === "string") return x.length;
    if (Array.isArray(x) && x.every((t) => typeof t === "number")) return x.length * CHARS_PER_TOKEN_ID;
    throw badRequest(`expected a string, got ${kind(x)}`, `${where}[${i}]`);
  });
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const longest = (xs: readonly number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

function maxTokens(body: Record<string, unknown>, keys: readonly string[]): number {
  let out = 0;
  for (const key of keys) {
    const v = optInt(body, key, key);
    if (v === undefined) continue;
    if (v < 0) throw badRequest(`must not be negative, got ${v}`, key);
    if (out === 0) out = v;
  }
  return out;
}

function includeUsage(body: Record<string, unknown>): boolean {
  const so = optObject(body, "stream_options", "stream_options");
  return so ? (optBool(so, "include_usage", "stream_options.include_usage") ?? false) : false;
}

/** POST /v1/completions (legacy): `prompt` a string or a batch; each is its own completion. */
export function parseOpenAICompletion(body: Record<string, unknown>): CallRequest {
  const model = requireModel(body);
  const stream = optBool(body, "stream", "stream") ?? false;
  const prompts = textBatch(body.prompt, "prompt");
  if (!prompts || prompts.length === 0) throw badRequest("is required", "prompt");
  const suffix = optString(body, "suffix", "suffix") ?? "";
  return {
    api: "completions",
    body,
    model,
    stream,
    // Each prompt is its own sequence: the longest is what must fit the context.
    promptChars: longest(prompts) + suffix.length,
    learnChars: sum(prompts) + suffix.length * prompts.length,
    loadOnly: false,
    unload: false,
    numCtx: undefined,
    maxOutputTokens: maxTokens(body, ["max_tokens"]),
    includeUsage: includeUsage(body),
  };
}

/** Characters of one Responses API input item (a message, a tool call or its output). */
function itemChars(item: unknown, where: string): number {
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    throw badRequest(`expected an object, got ${kind(item)}`, where);
  }
  const it = item as Record<string, unknown>;
  let n = 0;
  const content = it.content;
  if (typeof content === "string") n += content.length;
  else if (Array.isArray(content)) {
    content.forEach((part, j) => {
      if (typeof part !== "object" || part === null || Array.isArray(part)) {
        throw badRequest(`expected a content part object, got ${kind(part)}`, `${where}.content[${j}]`);
      }
      n += (optString(part as Record<string, unknown>, "text", `${where}.content[${j}].text`) ?? "").length;
    });
  } else if (content !== undefined && content !== null) {
    throw badRequest(`expected a string or an array, got ${kind(content)}`, `${where}.content`);
  }
  for (const key of ["output", "arguments", "name"]) {
    const v = it[key];
    if (typeof v === "string") n += v.length;
  }
  return n;
}

/** POST /v1/responses: `input` a string or a list of items, plus `instructions` and tools. */
export function parseResponses(body: Record<string, unknown>): CallRequest {
  const model = requireModel(body);
  const stream = optBool(body, "stream", "stream") ?? false;
  const input = body.input;
  let chars = 0;
  if (typeof input === "string") chars = input.length;
  else if (Array.isArray(input)) {
    for (const [i, x] of input.entries()) chars += itemChars(x, `input[${i}]`);
  } else if (input === undefined || input === null) throw badRequest("is required", "input");
  else throw badRequest(`expected a string or an array, got ${kind(input)}`, "input");
  chars += (optString(body, "instructions", "instructions") ?? "").length;
  const tools = optArray(body, "tools", "tools");
  // Responses tools are flat ({type, name, parameters}): their text is what the prompt carries.
  if (tools) chars += JSON.stringify(tools).length;
  return {
    api: "responses",
    body,
    model,
    stream,
    promptChars: chars,
    loadOnly: false,
    unload: false,
    numCtx: undefined,
    maxOutputTokens: maxTokens(body, ["max_output_tokens"]),
    includeUsage: false,
  };
}

function embedRequest(
  api: "embed" | "embeddings" | "openai-embed",
  body: Record<string, unknown>,
  inputs: number[],
  numCtx: number | undefined,
  unload: boolean,
): CallRequest {
  return {
    api,
    body,
    model: requireModel(body),
    stream: false,
    // Each input is embedded on its own: the longest is what must fit the context; the
    // engine's count covers them all.
    promptChars: longest(inputs),
    learnChars: sum(inputs),
    inputChars: inputs,
    loadOnly: inputs.length === 0,
    unload,
    numCtx,
    maxOutputTokens: 0,
    includeUsage: false,
  };
}

/** POST /api/embed: `input` a string or a list of strings; none = a load request. */
export function parseEmbed(body: Record<string, unknown>): CallRequest {
  requireModel(body);
  const inputs = textBatch(body.input, "input") ?? [];
  const truncate = optBool(body, "truncate", "truncate");
  optInt(body, "dimensions", "dimensions");
  const opts = runnerOptions(body);
  const keepAlive = keepAliveMs(body);
  const call = embedRequest("embed", body, inputs, opts.numCtx, isUnload(inputs.length === 0, keepAlive));
  if (truncate === true) {
    // The caller asked for cuts: the engine may truncate, no input is refused for its length.
    delete call.inputChars;
  } else if (inputs.length > 0) {
    // Ollama cuts an over-long input silently by default; asked not to, it refuses it instead
    // (the proxy's own check cannot know a context the engine clamps at load).
    body.truncate = false;
  }
  return call;
}

/** POST /api/embeddings (legacy): one `prompt`; none = a load request. */
export function parseLegacyEmbeddings(body: Record<string, unknown>): CallRequest {
  requireModel(body);
  const prompt = optString(body, "prompt", "prompt") ?? "";
  const opts = runnerOptions(body);
  const keepAlive = keepAliveMs(body);
  const inputs = prompt === "" ? [] : [prompt.length];
  return embedRequest("embeddings", body, inputs, opts.numCtx, isUnload(inputs.length === 0, keepAlive));
}

/** POST /v1/embeddings: `input` a string, a list of strings, or token-id arrays (required). */
export function parseOpenAIEmbed(body: Record<string, unknown>): CallRequest {
  requireModel(body);
  const inputs = textBatch(body.input, "input");
  if (!inputs || inputs.length === 0) throw badRequest("is required", "input");
  optString(body, "encoding_format", "encoding_format");
  optInt(body, "dimensions", "dimensions");
  return embedRequest("openai-embed", body, inputs, undefined, false);
}
