// An OpenAI SSE stream rewritten as Ollama's NDJSON stream, event by event: each content delta
// becomes one chunk, tool calls (streamed by OpenAI in pieces) one chunk when complete, and the
// usage chunk and [DONE] the final `"done": true` chunk with done_reason and the counts.
// It is a FrameTap (../framing.ts), so forward.ts pumps it like any stream; it only ever emits
// whole lines, and reports what the engine said (counts, finish, an error event).
import { StringDecoder } from "node:string_decoder";
import type { FrameTap, StreamReport } from "../framing.js";
import { type AnswerShape, doneReason, ollamaToolCalls } from "./openai-to-ollama.js";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** An event larger than this is refused (the stream ends in an error line), not buffered. */
const MAX_EVENT_CHARS = 8 * 1024 * 1024;

interface PartialCall {
  id?: string;
  name: string;
  args: string;
}

/**
 * The text of the common token event (one choice, a content delta, no finish, tool call, usage,
 * reasoning or error) as the JSON string literal it holds, found without parsing the event;
 * undefined for any other event. The markers cannot match inside a string value, where their
 * quotes are escaped.
 */
export function plainDelta(data: string, key: "content" | "text"): string | undefined {
  if (
    !data.includes('"finish_reason":null') ||
    data.includes('"tool_calls"') ||
    data.includes('"usage"') ||
    data.includes('"error"') ||
    data.includes('"reasoning_content"')
  ) {
    return undefined;
  }
  const marker = `"${key}":"`;
  const at = data.indexOf(marker);
  if (at < 0 || data.indexOf(marker, at + marker.length) >= 0) return undefined;
  let i = at + marker.length;
  for (; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) break;
  }
  return i < data.length ? data.slice(at + marker.length - 1, i + 1) : undefined;
}

export function sseToNdjsonTap(shape: AnswerShape, now: () => number = Date.now): FrameTap {
  const decoder = new StringDecoder("utf8");
  let pending = ""; // text after the last newline
  let data: string[] = []; // the data lines of the event being read
  let finish: unknown;
  let finalSent = false;
  const calls: PartialCall[] = [];
  const rep: StreamReport = { promptTokens: 0, outputTokens: 0, done: false, error: undefined };
  const generate = shape.api === "generate";

  // The hot path (one line per token): the line's head is built once per push, and a content
  // chunk's line is written as text rather than through an object.
  const modelJson = JSON.stringify(shape.model);
  let head = "";
  const stamp = () => {
    head = `{"model":${modelJson},"created_at":"${new Date(now()).toISOString()}",`;
  };
  stamp();
  const line = (fields: Obj): string => `${head}${JSON.stringify(fields).slice(1)}\n`;
  const piece = (content: string, thinking?: string): string =>
    thinking
      ? generate
        ? line({ response: content, thinking, done: false })
        : line({ message: { role: "assistant", content, thinking }, done: false })
      : generate
        ? `${head}"response":${JSON.stringify(content)},"done":false}\n`
        : `${head}"message":{"role":"assistant","content":${JSON.stringify(content)}},"done":false}\n`;

  const flushCalls = (): string => {
    if (calls.length === 0 || generate) return "";
    const list = ollamaToolCalls(
      calls.map((c) => ({ ...(c.id ? { id: c.id } : {}), function: { name: c.name, arguments: c.args } })),
    );
    calls.length = 0;
    return line({ message: { role: "assistant", content: "", tool_calls: list }, done: false });
  };

  const final = (): string => {
    if (finalSent || finish === undefined) return "";
    finalSent = true;
    rep.done = true;
    const tail = {
      done: true,
      done_reason: doneReason(finish),
      prompt_eval_count: rep.promptTokens,
      eval_count: rep.outputTokens,
    };
    return (
      flushCalls() +
      (generate
        ? line({ response: "", ...tail })
        : line({ message: { role: "assistant", content: "" }, ...tail }))
    );
  };

  /** One whole event's data → the NDJSON it becomes. */
  const deltaKey = shape.target === "completions" ? "text" : "content";
  const event = (text: string): string => {
    if (text === "[DONE]") return final();
    const plain = plainDelta(text, deltaKey);
    if (plain !== undefined) {
      if (plain === '""') return "";
      return generate
        ? `${head}"response":${plain},"done":false}\n`
        : `${head}"message":{"role":"assistant","content":${plain}},"done":false}\n`;
    }
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch {
      return ""; // not JSON (a comment or keep-alive): nothing to say
    }
    if (!isObj(obj)) return "";
    if (obj.error !== undefined) {
      const e = obj.error;
      const message =
        typeof e === "string" ? e : isObj(e) && typeof e.message === "string" ? e.message : JSON.stringify(e);
      rep.error = message;
      return `${JSON.stringify({ error: message })}\n`;
    }
    if (isObj(obj.usage)) {
      const u = obj.usage;
      if (typeof u.prompt_tokens === "number") rep.promptTokens = u.prompt_tokens;
      if (typeof u.completion_tokens === "number") rep.outputTokens = u.completion_tokens;
    }
    let out = "";
    for (const c of Array.isArray(obj.choices) ? obj.choices : []) {
      if (!isObj(c)) continue;
      if (shape.target === "completions") {
        if (typeof c.text === "string" && c.text !== "") out += piece(c.text);
      } else {
        const d = isObj(c.delta) ? c.delta : {};
        const content = typeof d.content === "string" ? d.content : "";
        const thinking = typeof d.reasoning_content === "string" ? d.reasoning_content : "";
        if (content !== "" || thinking !== "") out += piece(content, thinking || undefined);
        for (const t of Array.isArray(d.tool_calls) ? d.tool_calls : []) {
          if (!isObj(t)) continue;
          const at = typeof t.index === "number" ? t.index : calls.length;
          const fn = isObj(t.function) ? t.function : {};
          const call = calls[at] ?? { name: "", args: "" };
          calls[at] = call;
          if (typeof t.id === "string") call.id = t.id;
          if (typeof fn.name === "string") call.name += fn.name;
          if (typeof fn.arguments === "string") call.args += fn.arguments;
        }
      }
      if (typeof c.finish_reason === "string") {
        finish = c.finish_reason;
        out += flushCalls();
      }
    }
    return out;
  };

  const consume = (text: string, atEnd: boolean): string => {
    let out = "";
    const lines = (pending + text).split("\n");
    pending = atEnd ? "" : (lines.pop() ?? "");
    for (const raw of lines) {
      const l = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (l === "") {
        if (data.length > 0) out += event(data.join("\n"));
        data = [];
      } else if (l.startsWith("data:")) data.push(l.slice(5).trimStart());
    }
    if (atEnd && data.length > 0) {
      out += event(data.join("\n"));
      data = [];
    }
    if (pending.length > MAX_EVENT_CHARS) {
      pending = "";
      rep.error = `an event over ${MAX_EVENT_CHARS} characters`;
      out += `${JSON.stringify({ error: rep.error })}\n`;
    }
    return out;
  };

  return {
    push(chunk) {
      stamp();
      const out = consume(decoder.write(chunk), false);
      return out === "" ? undefined : Buffer.from(out);
    },
    end() {
      stamp();
      // An engine that ends the stream without [DONE] but after its finish still finished.
      const out = consume(decoder.end(), true) + final();
      return out === "" ? undefined : Buffer.from(out);
    },
    get clean() {
      return true; // only whole lines are ever emitted
    },
    report() {
      return { ...rep };
    },
  };
}
