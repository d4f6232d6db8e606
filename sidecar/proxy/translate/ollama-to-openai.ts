// An Ollama-API request (/api/chat, /api/generate, /api/embed, /api/embeddings) rewritten for
// an engine that speaks only OpenAI's API (docs/rules/engines.md, "The proxy across engines").
// Pure: a body in, a body and the list of fields that have no equivalent out. Every field the
// caller sent is either carried across or named in `dropped`, never lost silently.
import type { Engine } from "../../../src/core/index.js";
import type { Api } from "../validate.js";

/** The OpenAI API an Ollama API is translated to. */
export type TargetApi = "openai" | "completions" | "openai-embed";

export interface TranslatedRequest {
  target: TargetApi;
  body: Record<string, unknown>;
  /** Field paths of the caller's body that no OpenAI field carries (X-Kubemoot-Dropped). */
  dropped: string[];
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Options with the same name and meaning in OpenAI's chat and completions APIs. */
const SAME_OPTIONS = ["temperature", "top_p", "seed", "frequency_penalty", "presence_penalty"] as const;

/**
 * Sampling options beyond OpenAI's that an engine accepts at the top level of its OpenAI
 * routes, by engine (the option's name there). A generic OpenAI server is assumed to have none.
 */
const ENGINE_OPTIONS: Record<Engine, Record<string, string>> = {
  ollama: {},
  openai: {},
  vllm: { top_k: "top_k", min_p: "min_p", repeat_penalty: "repetition_penalty" },
  sglang: { top_k: "top_k", min_p: "min_p", repeat_penalty: "repetition_penalty" },
  llamacpp: { top_k: "top_k", min_p: "min_p", repeat_penalty: "repeat_penalty" },
};

/** The image's media type from the first bytes of its base64 (Ollama sends bare base64). */
export function imageDataUrl(b64: string): string {
  if (b64.startsWith("data:")) return b64;
  const type = b64.startsWith("iVBOR")
    ? "image/png"
    : b64.startsWith("/9j/")
      ? "image/jpeg"
      : b64.startsWith("R0lG")
        ? "image/gif"
        : b64.startsWith("UklG")
          ? "image/webp"
          : "image/png";
  return `data:${type};base64,${b64}`;
}

/** Ollama options → OpenAI body fields; the rest are named as dropped. */
function translateOptions(engine: Engine, body: Obj, out: Obj, dropped: string[]): void {
  const opts = body.options;
  if (!isObj(opts)) return;
  const extra = ENGINE_OPTIONS[engine];
  for (const [key, v] of Object.entries(opts)) {
    if (v === undefined || v === null) continue;
    if ((SAME_OPTIONS as readonly string[]).includes(key)) out[key] = v;
    else if (key === "num_predict") {
      // Ollama: -1 = no limit, -2 = fill the context; OpenAI has no field for either.
      if (typeof v === "number" && v >= 0) out.max_tokens = v;
      else if (v !== -1) dropped.push("options.num_predict");
    } else if (key === "stop") out.stop = v;
    else if (extra[key] !== undefined) out[extra[key] as string] = v;
    else dropped.push(`options.${key}`);
  }
}

/** `format`: "json" → json_object; a JSON schema → json_schema. */
function translateFormat(format: unknown, out: Obj, dropped: string[]): void {
  if (format === undefined || format === null || format === "") return;
  if (format === "json") out.response_format = { type: "json_object" };
  else if (isObj(format)) {
    out.response_format = { type: "json_schema", json_schema: { name: "response", schema: format } };
  } else dropped.push("format");
}

/** Ollama's tool call (arguments an object) → OpenAI's (arguments a JSON string). */
function toolCall(c: Obj, id: string): Obj {
  const fn = isObj(c.function) ? c.function : {};
  const args = fn.arguments;
  return {
    id,
    type: "function",
    function: {
      name: typeof fn.name === "string" ? fn.name : "",
      arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
    },
  };
}

/**
 * Ollama messages → OpenAI messages. Images become image_url parts; a tool result names its
 * tool (`tool_name`), which OpenAI ties to the call by id: the id of the latest call to that
 * tool still unanswered.
 */
function translateMessages(list: unknown[], dropped: string[]): Obj[] {
  const pending: Array<{ id: string; name: string }> = [];
  let next = 0;
  return list.map((m, i) => {
    const msg = isObj(m) ? m : {};
    const out: Obj = { role: typeof msg.role === "string" ? msg.role : "user" };
    const text = typeof msg.content === "string" ? msg.content : "";
    const images = Array.isArray(msg.images) ? msg.images : [];
    if (images.length > 0) {
      out.content = [
        ...(text !== "" ? [{ type: "text", text }] : []),
        ...images.map((b64) => ({ type: "image_url", image_url: { url: imageDataUrl(String(b64)) } })),
      ];
    } else out.content = text;
    if (Array.isArray(msg.tool_calls) && msg.tool_calls.length > 0) {
      out.tool_calls = msg.tool_calls.map((c) => {
        const call = isObj(c) ? c : {};
        const id = typeof call.id === "string" && call.id !== "" ? call.id : `call_${next++}`;
        const t = toolCall(call, id);
        pending.push({ id, name: (t.function as { name: string }).name });
        return t;
      });
    }
    if (out.role === "tool") {
      const name = typeof msg.tool_name === "string" ? msg.tool_name : undefined;
      const given = typeof msg.tool_call_id === "string" ? msg.tool_call_id : undefined;
      const at = given
        ? pending.findIndex((p) => p.id === given)
        : pending.findIndex((p) => name === undefined || p.name === name);
      const match = at >= 0 ? pending.splice(at, 1)[0] : undefined;
      out.tool_call_id = given ?? match?.id ?? `call_${next++}`;
    }
    if (typeof msg.name === "string") out.name = msg.name;
    for (const key of Object.keys(msg)) {
      if (!["role", "content", "images", "tool_calls", "tool_name", "tool_call_id", "name"].includes(key)) {
        dropped.push(`messages[${i}].${key}`);
      }
    }
    return out;
  });
}

/** Top-level fields each API reads; any other top-level field is named as dropped. */
const HANDLED: Record<string, readonly string[]> = {
  chat: ["model", "messages", "tools", "format", "options", "stream"],
  generate: ["model", "prompt", "system", "images", "format", "options", "stream", "raw"],
  embed: ["model", "input", "dimensions", "truncate"],
  embeddings: ["model", "prompt"],
};

function droppedTopLevel(api: string, body: Obj, dropped: string[]): void {
  const handled = HANDLED[api] ?? [];
  for (const key of Object.keys(body)) {
    if (body[key] === undefined || handled.includes(key)) continue;
    dropped.push(key);
  }
}

function streamFields(body: Obj, out: Obj): void {
  const stream = body.stream !== false; // Ollama streams unless told not to
  out.stream = stream;
  // The usage chunk carries the counts of the final Ollama chunk.
  if (stream) out.stream_options = { include_usage: true };
}

/**
 * Translates an Ollama-API body (its model already the placed one) for an OpenAI-only engine.
 *
 * /api/generate goes to chat completions with the prompt as the user message (and `system` as
 * a system message), because Ollama applies the model's chat template to a generate prompt and
 * an engine applies it only on its chat route; `raw: true` (no template) goes to
 * /v1/completions, which is the same thing there.
 */
export function translateRequest(
  api: Api,
  body: Record<string, unknown>,
  engine: Engine,
): TranslatedRequest | undefined {
  const dropped: string[] = [];
  const out: Obj = { model: body.model };
  switch (api) {
    case "chat": {
      out.messages = translateMessages(Array.isArray(body.messages) ? body.messages : [], dropped);
      if (Array.isArray(body.tools) && body.tools.length > 0) out.tools = body.tools;
      translateFormat(body.format, out, dropped);
      translateOptions(engine, body, out, dropped);
      streamFields(body, out);
      droppedTopLevel(api, body, dropped);
      return { target: "openai", body: out, dropped };
    }
    case "generate": {
      const prompt = typeof body.prompt === "string" ? body.prompt : "";
      const system = typeof body.system === "string" ? body.system : "";
      const images = Array.isArray(body.images) ? body.images : [];
      let target: TargetApi;
      if (body.raw === true) {
        target = "completions";
        out.prompt = prompt;
        if (system !== "") dropped.push("system"); // raw: no template, so nowhere to put it
        if (images.length > 0) dropped.push("images");
      } else {
        target = "openai";
        const user: Obj = { role: "user", content: prompt, ...(images.length > 0 ? { images } : {}) };
        out.messages = translateMessages(
          system !== "" ? [{ role: "system", content: system }, user] : [user],
          [],
        );
      }
      translateFormat(body.format, out, dropped);
      translateOptions(engine, body, out, dropped);
      streamFields(body, out);
      droppedTopLevel(api, body, dropped);
      return { target, body: out, dropped };
    }
    case "embed":
    case "embeddings": {
      out.input = api === "embed" ? body.input : body.prompt;
      if (api === "embed" && body.dimensions !== undefined && body.dimensions !== null) {
        out.dimensions = body.dimensions;
      }
      // The proxy refuses over-long inputs itself and the engines refuse them too, which is
      // truncate: false; a caller's truncate: true has no OpenAI equivalent.
      if (body.truncate === true) dropped.push("truncate");
      if (isObj(body.options)) for (const k of Object.keys(body.options)) dropped.push(`options.${k}`);
      droppedTopLevel(api, body, dropped);
      return { target: "openai-embed", body: out, dropped: dropped.filter((d) => d !== "options") };
    }
    default:
      return undefined; // already an OpenAI API
  }
}
