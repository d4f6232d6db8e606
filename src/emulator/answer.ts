// What a chat or generate request answers, token by token, before any timing: thinking text,
// then prose, JSON (`format`) or tool calls. Deterministic: seeded by the model and the last
// message. The rules are in src/emulator/README.md.
import { Rng } from "../prng/index.js";
import { valueFor } from "./schema-value.js";
import { answerToken, CHARS_PER_TOKEN, hash32 } from "./tokenizer.js";

export type FinishReason = "stop" | "length";

/** One generated token: shown as thinking, as content, or hidden (a tool call being written). */
export interface AnswerPiece {
  kind: "thinking" | "content" | "tool";
  text: string;
}

export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface AnswerPlan {
  pieces: AnswerPiece[];
  /** Sent once every piece is out; absent when num_predict cut the answer short. */
  toolCalls: ToolCall[];
  reason: FinishReason;
}

/** A tool as both APIs declare it: {type: "function", function: {name, description, parameters}}. */
export interface ToolDef {
  name: string;
  parameters: unknown;
}

/** "json", a JSON schema, or nothing. */
export type OutputFormat = "json" | Record<string, unknown> | undefined;

/** Which tools a request may, must or must not call (OpenAI's tool_choice; Ollama has none). */
export type ToolChoice = "auto" | "none" | "required" | { name: string };

export interface AnswerRequest {
  model: string;
  /** The last message's role and text (the prompt of /api/generate is a user message). */
  lastRole: string;
  lastText: string;
  /** Prose length when nothing else decides it (the emulator's outputTokens). */
  proseTokens: number;
  think: boolean;
  format: OutputFormat;
  tools: ToolDef[];
  toolChoice: ToolChoice;
  /** num_predict / max_tokens: > 0 cuts the answer at that many tokens. */
  numPredict: number | undefined;
}

function words(seed: number, n: number, kind: "thinking" | "content"): AnswerPiece[] {
  return Array.from({ length: n }, (_, i) => ({ kind, text: answerToken(seed, i, n) }));
}

/** Splits text into pieces of about CHARS_PER_TOKEN code points (alternately 3 and 4). */
function chunks(text: string, kind: "content" | "tool"): AnswerPiece[] {
  const cps = [...text];
  const out: AnswerPiece[] = [];
  for (let i = 0, k = 0; i < cps.length; k++) {
    const n = k % 2 === 0 ? Math.floor(CHARS_PER_TOKEN) : Math.ceil(CHARS_PER_TOKEN);
    out.push({ kind, text: kind === "tool" ? "" : cps.slice(i, i + n).join("") });
    i += n;
  }
  return out;
}

function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function mentions(text: string, phrase: string): boolean {
  const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^a-z0-9])${escaped}s?($|[^a-z0-9])`).test(text);
}

/**
 * The tools a user message asks for: each tool whose full name (as written, or with its
 * parts separated by spaces) or the last word of its name of 4+ letters appears in the text
 * as a whole word ("get_current_weather": "get_current_weather", "get current weather",
 * "weather" or "weathers"), in the tools' order.
 */
export function requestedTools(text: string, tools: readonly ToolDef[]): ToolDef[] {
  const t = text.toLowerCase();
  return tools.filter((tool) => {
    const parts = nameWords(tool.name);
    const noun = [...parts].reverse().find((w) => w.length >= 4 && /[a-z]/.test(w));
    return (
      mentions(t, tool.name.toLowerCase()) ||
      (parts.length > 0 && mentions(t, parts.join(" "))) ||
      (noun !== undefined && mentions(t, noun))
    );
  });
}

function chooseTools(req: AnswerRequest): ToolDef[] {
  if (req.tools.length === 0 || req.toolChoice === "none" || req.lastRole !== "user") return [];
  const choice = req.toolChoice;
  if (typeof choice === "object") return req.tools.filter((t) => t.name === choice.name).slice(0, 1);
  const asked = requestedTools(req.lastText, req.tools);
  if (asked.length === 0 && choice === "required") return req.tools.slice(0, 1);
  return asked;
}

/** The whole answer of a request, before num_predict. */
export function planAnswer(req: AnswerRequest): AnswerPlan {
  const seed = hash32(`${req.model}\n${req.lastText}`);
  const pieces: AnswerPiece[] = req.think
    ? words(hash32(`think\n${req.model}\n${req.lastText}`), req.proseTokens, "thinking")
    : [];
  let toolCalls: ToolCall[] = [];
  const calls = chooseTools(req);
  if (calls.length > 0) {
    const rng = new Rng(seed);
    toolCalls = calls.map((t) => {
      const args = valueFor(t.parameters ?? { type: "object" }, rng.fork(t.name));
      return {
        name: t.name,
        arguments:
          typeof args === "object" && args !== null && !Array.isArray(args)
            ? (args as Record<string, unknown>)
            : {},
      };
    });
    pieces.push(...chunks(JSON.stringify(toolCalls), "tool"));
  } else if (req.format === "json") {
    pieces.push(
      ...chunks(
        JSON.stringify({
          answer: words(seed, req.proseTokens, "content")
            .map((p) => p.text)
            .join(""),
        }),
        "content",
      ),
    );
  } else if (req.format !== undefined) {
    pieces.push(...chunks(JSON.stringify(valueFor(req.format, new Rng(seed))), "content"));
  } else {
    pieces.push(...words(seed, req.proseTokens, "content"));
  }
  // num_predict at or below the natural length cuts the answer: done_reason "length".
  if (req.numPredict !== undefined && req.numPredict > 0 && req.numPredict <= pieces.length) {
    return { pieces: pieces.slice(0, req.numPredict), toolCalls: [], reason: "length" };
  }
  return { pieces, toolCalls, reason: "stop" };
}
