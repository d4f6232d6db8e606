// Prompt size in characters (docs/rules/placement.md §3) over a neutral chat shape that both the
// Ollama `/api/chat` and the OpenAI chat completions bodies fit: message text, tool results
// (tool name + text), tool-call names and arguments, and tool specifications.
import { type CharsPerToken, estimateTokens, INITIAL_CHARS_PER_TOKEN } from "./chars-per-token.js";

/** One content part of an OpenAI multi-part message; only text parts count. */
export interface ChatContentPart {
  type?: string;
  text?: string;
}

/** A tool call an assistant message makes (Ollama: arguments object; OpenAI: JSON string). */
export interface ChatToolCall {
  function?: { name?: string; arguments?: unknown };
}

/** A chat message as Ollama or OpenAI send it. */
export interface ChatMessage {
  role?: string;
  content?: string | readonly ChatContentPart[] | null;
  tool_calls?: readonly ChatToolCall[] | null;
  /** OpenAI names a tool result's tool here (or a participant's name). */
  name?: string;
  /** Ollama names a tool result's tool here. */
  tool_name?: string;
}

/** A tool the model may call. */
export interface ChatToolSpec {
  type?: string;
  function?: { name?: string; description?: string; parameters?: unknown };
}

function textLength(v: unknown): number {
  if (typeof v === "string") return v.length;
  if (v === undefined || v === null) return 0;
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return 0; // a cyclic value cannot be sent either
  }
}

function contentLength(content: ChatMessage["content"]): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content as readonly ChatContentPart[]) {
    if (typeof part?.text === "string") n += part.text.length;
  }
  return n;
}

/** Characters one message contributes. */
export function messageChars(msg: ChatMessage): number {
  let n = contentLength(msg.content);
  if (msg.role === "tool") n += (msg.tool_name ?? msg.name ?? "").length;
  for (const call of msg.tool_calls ?? []) {
    n += (call?.function?.name ?? "").length + textLength(call?.function?.arguments);
  }
  return n;
}

/** Characters of the tool specifications. */
export function toolsChars(tools: readonly ChatToolSpec[] | undefined | null): number {
  let n = 0;
  for (const t of tools ?? []) {
    const f = t?.function;
    if (!f) continue;
    n += (f.name ?? "").length + (f.description ?? "").length + textLength(f.parameters);
  }
  return n;
}

/** Characters of a whole prompt: every message plus the tool specifications. */
export function promptChars(
  messages: readonly ChatMessage[] | undefined | null,
  tools?: readonly ChatToolSpec[] | null,
): number {
  let n = 0;
  for (const m of messages ?? []) n += messageChars(m);
  return n + toolsChars(tools);
}

/**
 * The next prompt of an agent loop: what the engine reported for the last prompt, plus the
 * reply it produced (now part of the history), plus an estimate of the messages appended since.
 */
export function nextPromptTokens(
  lastPromptTokens: number,
  lastReplyTokens: number,
  appended: readonly ChatMessage[],
  ratio: CharsPerToken = INITIAL_CHARS_PER_TOKEN,
): number {
  const base = Math.max(0, lastPromptTokens || 0) + Math.max(0, lastReplyTokens || 0);
  return base + estimateTokens(promptChars(appended), ratio);
}
