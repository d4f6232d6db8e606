// The emulator's deterministic tokenizer and Ollama's prompt truncation.
//
// Tokens: a text of n Unicode code points is ceil(n / 3.5) tokens (0 for empty text), close
// to BPE tokenizers on English prose and code. A chat prompt is rendered as every message
// costing 4 tokens of template (role header and end marker) plus its content, plus 3 tokens
// for the assistant header that starts the answer; tool definitions count as their JSON.
// /api/generate renders an optional system message and the prompt as one user message the
// same way; with `raw` the prompt is counted alone.
//
// Truncation follows Ollama: /api/chat keeps the last message and as many of the most recent
// others as fit num_ctx, plus every system message before them; if that still exceeds
// num_ctx the runner cuts at token level, keeping the first num_keep (4) tokens and dropping
// the ones after them (the middle of the prompt), so that exactly num_ctx tokens are
// evaluated. The answer is still 200; prompt_eval_count tells what was evaluated.
import { OLLAMA_DEFAULT_NUM_KEEP } from "../engines/index.js";

export const CHARS_PER_TOKEN = 3.5;
export const MESSAGE_TEMPLATE_TOKENS = 4;
export const GENERATION_PROMPT_TOKENS = 3;

export interface PromptMessage {
  role: string;
  content: string;
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function countTextTokens(text: string): number {
  const n = codePoints(text);
  return n === 0 ? 0 : Math.ceil(n / CHARS_PER_TOKEN);
}

export function messageTokens(message: PromptMessage): number {
  return MESSAGE_TEMPLATE_TOKENS + countTextTokens(message.content);
}

export function chatPromptTokens(messages: readonly PromptMessage[], toolsTokens = 0): number {
  let n = GENERATION_PROMPT_TOKENS + toolsTokens;
  for (const m of messages) n += messageTokens(m);
  return n;
}

export function generatePromptTokens(prompt: string, system: string | undefined, raw: boolean): number {
  if (raw) return countTextTokens(prompt);
  const messages: PromptMessage[] = [];
  if (system) messages.push({ role: "system", content: system });
  messages.push({ role: "user", content: prompt });
  return chatPromptTokens(messages);
}

export interface ChatTruncation {
  /** Messages rendered into the prompt, in order. */
  kept: PromptMessage[];
  /** How many messages were dropped. */
  dropped: number;
  /** Tokens of the rendered prompt before any token-level cut. */
  renderedTokens: number;
  /** Tokens actually evaluated: min(renderedTokens, numCtx). */
  evaluatedTokens: number;
}

/**
 * Ollama's chat truncation: drop the oldest non-system messages, always keeping the last.
 * Linear in the number of messages (suffix sums), so huge histories stay cheap.
 */
export function truncateChat(
  messages: readonly PromptMessage[],
  numCtx: number,
  toolsTokens = 0,
): ChatTruncation {
  const n = messages.length;
  const tokens = messages.map(messageTokens);
  // suffix[i] = tokens of messages[i..]; systemBefore[i] = tokens of system messages in [0, i).
  const suffix = new Array<number>(n + 1).fill(0);
  for (let i = n - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] as number) + (tokens[i] as number);
  const systemBefore = new Array<number>(n + 1).fill(0);
  for (let i = 0; i < n; i++) {
    systemBefore[i + 1] =
      (systemBefore[i] as number) + (messages[i]?.role === "system" ? (tokens[i] as number) : 0);
  }
  const fixed = GENERATION_PROMPT_TOKENS + toolsTokens;
  let start = Math.max(n - 1, 0);
  for (let i = n - 2; i >= 0; i--) {
    if (fixed + (systemBefore[i] as number) + (suffix[i] as number) > numCtx) break;
    start = i;
  }
  const kept = [...messages.slice(0, start).filter((m) => m.role === "system"), ...messages.slice(start)];
  const renderedTokens = fixed + (systemBefore[start] as number) + (suffix[start] as number);
  return {
    kept,
    dropped: n - kept.length,
    renderedTokens,
    evaluatedTokens: truncateTokens(renderedTokens, numCtx).evaluated,
  };
}

/**
 * The runner's token-level cut: a prompt longer than num_ctx keeps its first num_keep tokens
 * and its last (num_ctx − num_keep) ones; the middle is dropped.
 */
export function truncateTokens(
  tokens: number,
  numCtx: number,
  numKeep = OLLAMA_DEFAULT_NUM_KEEP,
): { evaluated: number; dropped: number; keptHead: number } {
  if (tokens <= numCtx) return { evaluated: tokens, dropped: 0, keptHead: tokens };
  const keep = Math.max(0, Math.min(numKeep, numCtx - 1));
  return { evaluated: numCtx, dropped: tokens - numCtx, keptHead: keep };
}

const WORDS = [
  "the",
  "model",
  "answers",
  "with",
  "a",
  "steady",
  "stream",
  "of",
  "tokens",
  "while",
  "GPU",
  "memory",
  "holds",
  "weights",
  "and",
  "cache",
  "for",
  "each",
  "slot",
  "scheduler",
  "places",
  "calls",
  "where",
  "room",
  "exists",
  "agents",
  "wait",
  "in",
  "order",
  "context",
  "window",
  "fits",
  "prompt",
  "load",
  "time",
  "keeps",
  "proportions",
  "emulated",
  "Ollama",
  "replies",
  "quietly",
  "then",
  "stops",
  "when",
  "done",
  "so",
  "tests",
  "can",
  "count",
  "every",
  "word",
  "placement",
  "ticket",
  "reserves",
  "VRAM",
  "before",
  "it",
  "runs",
  "kv",
  "slab",
  "is",
  "fixed",
  "at",
  "start",
];

/** FNV-1a 32-bit hash, for seeding the deterministic answers. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * Token `index` (0-based) of the deterministic answer seeded by `seed`: one word each, with
 * a leading space after the first, and a period to close the answer's last token.
 */
export function answerToken(seed: number, index: number, total: number): string {
  const word = WORDS[((seed + Math.imul(index + 1, 0x9e3779b1)) >>> 0) % WORDS.length] ?? "token";
  const text = index === 0 ? word.charAt(0).toUpperCase() + word.slice(1) : ` ${word}`;
  return index === total - 1 ? `${text}.` : text;
}

/** The whole deterministic answer (what the stream concatenates to). */
export function answerText(seed: number, total: number): string {
  let s = "";
  for (let i = 0; i < total; i++) s += answerToken(seed, i, total);
  return s;
}
