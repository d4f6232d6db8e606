// An OpenAI SSE stream rewritten as Ollama's NDJSON stream, event by event: each content delta
// becomes one chunk, tool calls (streamed by OpenAI in pieces) one chunk when complete, and the
// usage chunk and [DONE] the final `"done": true` chunk with done_reason and the counts.
// It is a FrameTap (../framing.ts), so forward.ts pumps it like any stream; it only ever emits
// whole lines, and reports what the engine said (counts, finish, an error event).
import { StringDecoder } from "node:string_decoder";
import type { FrameTap, StreamReport } from "../framing.js";
import { type AnswerShape, doneReason, ollamaToolCalls, usageCounts } from "./openai-to-ollama.js";

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
  return new SseToNdjson(shape, now);
}

class SseToNdjson implements FrameTap {
  private readonly decoder = new StringDecoder("utf8");
  private pending = ""; // text after the last newline
  private data: string[] = []; // the data lines of the event being read
  private finish: unknown;
  private finalSent = false;
  private readonly calls: PartialCall[] = [];
  private readonly rep: StreamReport = { promptTokens: 0, outputTokens: 0, done: false, error: undefined };
  private readonly generate: boolean;
  private readonly deltaKey: "content" | "text";
  // The hot path (one line per token): the line's head is built once per push, and a content
  // chunk's line is written as text rather than through an object.
  private readonly modelJson: string;
  private head = "";

  constructor(
    private readonly shape: AnswerShape,
    private readonly now: () => number,
  ) {
    this.generate = shape.api === "generate";
    this.deltaKey = shape.target === "completions" ? "text" : "content";
    this.modelJson = JSON.stringify(shape.model);
    this.stamp();
  }

  push(chunk: Buffer): Buffer | undefined {
    this.stamp();
    const out = this.consume(this.decoder.write(chunk), false);
    return out === "" ? undefined : Buffer.from(out);
  }

  end(): Buffer | undefined {
    this.stamp();
    // An engine that ends the stream without [DONE] but after its finish still finished.
    const out = this.consume(this.decoder.end(), true) + this.final();
    return out === "" ? undefined : Buffer.from(out);
  }

  get clean(): boolean {
    return true; // only whole lines are ever emitted
  }

  report(): StreamReport {
    return { ...this.rep };
  }

  private stamp(): void {
    this.head = `{"model":${this.modelJson},"created_at":"${new Date(this.now()).toISOString()}",`;
  }

  private line(fields: Obj): string {
    return `${this.head}${JSON.stringify(fields).slice(1)}\n`;
  }

  /** A content chunk whose content is already a JSON string literal. */
  private contentLine(literal: string): string {
    return this.generate
      ? `${this.head}"response":${literal},"done":false}\n`
      : `${this.head}"message":{"role":"assistant","content":${literal}},"done":false}\n`;
  }

  private piece(content: string, thinking?: string): string {
    if (!thinking) return this.contentLine(JSON.stringify(content));
    return this.generate
      ? this.line({ response: content, thinking, done: false })
      : this.line({ message: { role: "assistant", content, thinking }, done: false });
  }

  private flushCalls(): string {
    const calls = this.calls;
    if (calls.length === 0 || this.generate) return "";
    const list = ollamaToolCalls(
      calls.map((c) => ({ ...(c.id ? { id: c.id } : {}), function: { name: c.name, arguments: c.args } })),
    );
    calls.length = 0;
    return this.line({ message: { role: "assistant", content: "", tool_calls: list }, done: false });
  }

  private final(): string {
    if (this.finalSent || this.finish === undefined) return "";
    this.finalSent = true;
    const rep = this.rep;
    rep.done = true;
    const tail = {
      done: true,
      done_reason: doneReason(this.finish),
      prompt_eval_count: rep.promptTokens,
      ...(rep.cachedTokens ? { prompt_eval_cached_count: rep.cachedTokens } : {}),
      ...(rep.promptEvalMs ? { prompt_eval_duration: Math.round(rep.promptEvalMs * 1e6) } : {}),
      eval_count: rep.outputTokens,
    };
    return (
      this.flushCalls() +
      (this.generate
        ? this.line({ response: "", ...tail })
        : this.line({ message: { role: "assistant", content: "" }, ...tail }))
    );
  }

  /** One whole event's data → the NDJSON it becomes. */
  private event(text: string): string {
    if (text === "[DONE]") return this.final();
    const plain = plainDelta(text, this.deltaKey);
    if (plain !== undefined) return plain === '""' ? "" : this.contentLine(plain);
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
      this.rep.error = message;
      return `${JSON.stringify({ error: message })}\n`;
    }
    if (isObj(obj.usage) || isObj(obj.timings)) {
      const counts = usageCounts(obj.usage, obj.timings);
      if (isObj(obj.usage)) {
        this.rep.promptTokens = counts.prompt_eval_count;
        this.rep.outputTokens = counts.eval_count;
      }
      if (counts.prompt_eval_cached_count) this.rep.cachedTokens = counts.prompt_eval_cached_count;
      if (counts.prompt_eval_duration) this.rep.promptEvalMs = counts.prompt_eval_duration / 1e6;
    }
    let out = "";
    for (const c of Array.isArray(obj.choices) ? obj.choices : []) {
      if (isObj(c)) out += this.choice(c);
    }
    return out;
  }

  /** One choice of a parsed event: its text, thinking and tool-call pieces, and its finish. */
  private choice(c: Obj): string {
    let out = "";
    if (this.shape.target === "completions") {
      if (typeof c.text === "string" && c.text !== "") out += this.piece(c.text);
    } else {
      const d = isObj(c.delta) ? c.delta : {};
      const content = typeof d.content === "string" ? d.content : "";
      const thinking = typeof d.reasoning_content === "string" ? d.reasoning_content : "";
      if (content !== "" || thinking !== "") out += this.piece(content, thinking || undefined);
      for (const t of Array.isArray(d.tool_calls) ? d.tool_calls : []) if (isObj(t)) this.toolCall(t);
    }
    if (typeof c.finish_reason === "string") {
      this.finish = c.finish_reason;
      // The engine's own reason, as an untranslated stream's report has it (framing.ts).
      this.rep.finishReason = c.finish_reason.slice(0, 32);
      out += this.flushCalls();
    }
    return out;
  }

  /** A piece of a streamed tool call, gathered until the call is complete. */
  private toolCall(t: Obj): void {
    const calls = this.calls;
    const at = typeof t.index === "number" ? t.index : calls.length;
    const fn = isObj(t.function) ? t.function : {};
    const call = calls[at] ?? { name: "", args: "" };
    calls[at] = call;
    if (typeof t.id === "string") call.id = t.id;
    if (typeof fn.name === "string") call.name += fn.name;
    if (typeof fn.arguments === "string") call.args += fn.arguments;
  }

  private consume(text: string, atEnd: boolean): string {
    let out = "";
    const lines = (this.pending + text).split("\n");
    this.pending = atEnd ? "" : (lines.pop() ?? "");
    for (const raw of lines) {
      const l = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (l === "") {
        if (this.data.length > 0) out += this.event(this.data.join("\n"));
        this.data = [];
      } else if (l.startsWith("data:")) this.data.push(l.slice(5).trimStart());
    }
    if (atEnd && this.data.length > 0) {
      out += this.event(this.data.join("\n"));
      this.data = [];
    }
    if (this.pending.length > MAX_EVENT_CHARS) {
      this.pending = "";
      this.rep.error = `an event over ${MAX_EVENT_CHARS} characters`;
      out += `${JSON.stringify({ error: this.rep.error })}\n`;
    }
    return out;
  }
}
