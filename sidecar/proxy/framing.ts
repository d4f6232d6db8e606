// Stream taps: the proxy forwards a provider's streamed answer unit by unit (NDJSON lines, SSE
// events), byte for byte, and only ever whole units — so that when the provider breaks off
// mid-unit, the error line the proxy appends starts on a clean boundary. On the way it notes
// what the engine reported (Ollama's final chunk, OpenAI's usage chunk, an error unit) without
// parsing every token.
import { promptReport } from "./prompt-report.js";

const NL = 0x0a;
const NDJSON_SEP = Buffer.from("\n");
const SSE_SEP = Buffer.from("\n\n");
/** A unit longer than this is forwarded as it comes (no hold-back, no report parsing). */
const MAX_CARRY_BYTES = 4 * 1024 * 1024;

/** What the engine told about the call. */
export interface StreamReport {
  /** prompt_eval_count / usage.prompt_tokens; 0 when not reported. */
  promptTokens: number;
  /** eval_count / usage.completion_tokens; 0 when not reported. */
  outputTokens: number;
  /** The answer finished (Ollama `"done": true`, OpenAI `[DONE]` or a finish_reason). */
  done: boolean;
  /** An error unit the provider sent (its message). */
  error: string | undefined;
  /** Ollama's load_duration (ms): the engine's load for this call; 0 when warm or not reported. */
  loadMs?: number;
  /**
   * Prompt tokens the engine reused from its prompt cache (Ollama's prompt_eval_cached_count,
   * OpenAI's usage.prompt_tokens_details.cached_tokens, llama.cpp's timings.cache_n).
   */
  cachedTokens?: number;
  /** The engine's time on the prompt's uncached tokens (ms): Ollama's prompt_eval_duration, llama.cpp's timings.prompt_ms. */
  promptEvalMs?: number;
  /** Why the answer ended (Ollama's done_reason, OpenAI's finish_reason), when the unit read says. */
  finishReason?: string;
}

export interface FrameTap {
  /** Bytes to forward now (whole units), or undefined when nothing is complete yet. */
  push(chunk: Buffer): Buffer | undefined;
  /** End of stream: whatever is left (an unterminated last unit), or undefined. */
  end(): Buffer | undefined;
  /** Whether the bytes forwarded so far end on a unit boundary (always, except after overflow). */
  readonly clean: boolean;
  report(): StreamReport;
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0;
}

/** A JSON object, or undefined when the text is not one. */
export function parseObject(buf: Buffer | string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(typeof buf === "string" ? buf : buf.toString("utf8"));
    return typeof v === "object" && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function errorText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "object" && v !== null) {
    const m = (v as { message?: unknown }).message;
    if (typeof m === "string") return m;
  }
  return v === undefined || v === null ? undefined : JSON.stringify(v);
}

/** What one Ollama JSON object (a final chunk, a whole answer, or an error line) reports. */
export function ollamaReport(obj: Record<string, unknown> | undefined): StreamReport {
  if (!obj) return { promptTokens: 0, outputTokens: 0, done: false, error: undefined };
  return {
    promptTokens: num(obj.prompt_eval_count),
    outputTokens: num(obj.eval_count),
    done: obj.done === true,
    error: obj.error !== undefined ? errorText(obj.error) : undefined,
    ...(num(obj.load_duration) > 0 ? { loadMs: num(obj.load_duration) / 1e6 } : {}),
    ...(num(obj.prompt_eval_cached_count) > 0 ? { cachedTokens: num(obj.prompt_eval_cached_count) } : {}),
    ...(num(obj.prompt_eval_duration) > 0 ? { promptEvalMs: num(obj.prompt_eval_duration) / 1e6 } : {}),
    ...(typeof obj.done_reason === "string" ? { finishReason: obj.done_reason.slice(0, 32) } : {}),
  };
}

/** What one OpenAI JSON object (a whole completion, or one chunk) reports. */
export function openaiReport(obj: Record<string, unknown> | undefined): StreamReport {
  if (!obj) return { promptTokens: 0, outputTokens: 0, done: false, error: undefined };
  // The Responses API nests its answer in stream events (`{"type", "response": {...}}`) and
  // counts input/output tokens; chat and completions count prompt/completion tokens.
  const response = (typeof obj.response === "object" && obj.response !== null ? obj.response : obj) as Record<
    string,
    unknown
  >;
  const usage = (obj.usage ?? response.usage) as
    | {
        prompt_tokens?: unknown;
        completion_tokens?: unknown;
        input_tokens?: unknown;
        output_tokens?: unknown;
      }
    | undefined;
  const choices = Array.isArray(obj.choices) ? (obj.choices as Array<{ finish_reason?: unknown }>) : [];
  const finished =
    obj.type === "response.completed" ||
    obj.type === "response.incomplete" ||
    response.status === "completed";
  const { cachedTokens: cached, promptMs } = promptReport(usage, obj.timings);
  return {
    promptTokens: num(usage?.prompt_tokens) || num(usage?.input_tokens),
    outputTokens: num(usage?.completion_tokens) || num(usage?.output_tokens),
    done: finished || choices.some((c) => typeof c?.finish_reason === "string"),
    error: obj.error !== undefined ? errorText(obj.error) : undefined,
    ...(cached > 0 ? { cachedTokens: cached } : {}),
    ...(promptMs > 0 ? { promptEvalMs: promptMs } : {}),
    ...(typeof choices[0]?.finish_reason === "string"
      ? { finishReason: choices[0].finish_reason.slice(0, 32) }
      : {}),
  };
}

/** Index just past the last separator in `buf`, or -1. */
function lastBoundary(buf: Buffer, sep: Buffer): number {
  const i = buf.lastIndexOf(sep);
  return i < 0 ? -1 : i + sep.length;
}

/** NDJSON: forwards whole lines; parses only the last non-empty line of the stream. */
export function ndjsonTap(): FrameTap {
  let carry: Buffer | undefined;
  let last: Buffer | undefined;
  let clean = true;
  const noteLast = (buf: Buffer, end: number) => {
    // The last non-empty line ending at or before `end` (exclusive of its newline).
    let stop = end;
    while (stop > 0) {
      const nl = buf.lastIndexOf(NL, stop - 1);
      const line = buf.subarray(nl + 1, stop);
      if (line.length > 0 && !(line.length === 1 && line[0] === 0x0d)) {
        last = line;
        return;
      }
      if (nl < 0) return;
      stop = nl;
    }
  };
  return {
    push(chunk) {
      const data = carry ? Buffer.concat([carry, chunk]) : chunk;
      const cut = lastBoundary(data, NDJSON_SEP);
      if (cut < 0) {
        if (data.length > MAX_CARRY_BYTES) {
          carry = undefined;
          clean = false;
          return data;
        }
        carry = data;
        return undefined;
      }
      noteLast(data, cut - 1);
      carry = cut < data.length ? data.subarray(cut) : undefined;
      clean = true;
      return cut === data.length ? data : data.subarray(0, cut);
    },
    end() {
      const rest = carry;
      carry = undefined;
      if (rest && rest.toString("utf8").trim() !== "") last = rest;
      return rest;
    },
    get clean() {
      return clean && carry === undefined;
    },
    report() {
      return ollamaReport(last ? parseObject(last) : undefined);
    },
  };
}

const DATA_PREFIX = "data:";
const MARKERS = ['"usage"', '"error"', '"finish_reason":"', "[DONE]", '"response.completed"'].map((m) =>
  Buffer.from(m),
);

/**
 * SSE: forwards whole events; notes usage, finish and error events. With `hideUsage`, drops
 * the usage-only chunk (`"choices":[]` with `usage`) that the proxy asked for on the caller's
 * behalf, so the caller sees the stream it asked for.
 */
export function sseTap(hideUsage: boolean): FrameTap {
  let carry: Buffer | undefined;
  let clean = true;
  const rep: StreamReport = { promptTokens: 0, outputTokens: 0, done: false, error: undefined };
  /** Inspects one event; returns false when it is to be dropped. */
  const inspect = (ev: Buffer): boolean => {
    if (!MARKERS.some((m) => ev.indexOf(m) >= 0)) return true; // an ordinary token event
    const text = ev.toString("utf8");
    const lines = text.split("\n").filter((l) => l.startsWith(DATA_PREFIX));
    if (lines.length === 0) return true;
    const data = lines.map((l) => l.slice(DATA_PREFIX.length).trimStart()).join("\n");
    if (data === "[DONE]") {
      rep.done = true;
      return true;
    }
    const obj = parseObject(Buffer.from(data));
    const r = openaiReport(obj);
    if (r.promptTokens > 0) rep.promptTokens = r.promptTokens;
    if (r.outputTokens > 0) rep.outputTokens = r.outputTokens;
    if (r.cachedTokens) rep.cachedTokens = r.cachedTokens;
    if (r.promptEvalMs) rep.promptEvalMs = r.promptEvalMs;
    if (r.done) rep.done = true;
    if (r.finishReason !== undefined) rep.finishReason = r.finishReason;
    if (r.error !== undefined) rep.error = r.error;
    const usageOnly =
      obj !== undefined && Array.isArray(obj.choices) && obj.choices.length === 0 && obj.usage;
    return !(hideUsage && usageOnly);
  };
  const forward = (data: Buffer, cut: number): Buffer => {
    // Walk the complete events in data[0, cut).
    const kept: Buffer[] = [];
    let dropped = false;
    let start = 0;
    while (start < cut) {
      const i = data.indexOf(SSE_SEP, start);
      const stop = i < 0 || i + SSE_SEP.length > cut ? cut : i + SSE_SEP.length;
      const ev = data.subarray(start, stop);
      if (inspect(ev.subarray(0, Math.max(0, ev.length - SSE_SEP.length)))) kept.push(ev);
      else dropped = true;
      start = stop;
    }
    if (!dropped) return cut === data.length ? data : data.subarray(0, cut);
    return Buffer.concat(kept);
  };
  return {
    push(chunk) {
      const data = carry ? Buffer.concat([carry, chunk]) : chunk;
      const cut = lastBoundary(data, SSE_SEP);
      if (cut < 0) {
        if (data.length > MAX_CARRY_BYTES) {
          carry = undefined;
          clean = false;
          return data;
        }
        carry = data;
        return undefined;
      }
      carry = cut < data.length ? data.subarray(cut) : undefined;
      clean = true;
      const out = forward(data, cut);
      return out.length > 0 ? out : undefined;
    },
    end() {
      const rest = carry;
      carry = undefined;
      if (!rest || rest.toString("utf8").trim() === "") return rest;
      return inspect(rest) ? rest : undefined;
    },
    get clean() {
      return clean && carry === undefined;
    },
    report() {
      return { ...rep };
    },
  };
}
