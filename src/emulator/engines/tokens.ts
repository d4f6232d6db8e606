// The personalities' tokenizer and chat template, built on the emulator's own counts
// (tokenizer.ts) so that every route agrees: a chat prompt rendered by renderChat and then
// tokenized counts exactly what /v1/chat/completions reports as prompt_tokens.
//
// Special tokens are written `<|name|>` and count one token each when parsed (as llama.cpp's
// parse_special and the engines' chat templates do); the text between them counts as
// tokenizer.ts counts text (⌈code points / 3.5⌉). A message renders as
// `<|im_start|><|role|><|sep|>content<|im_end|>`: 4 template tokens plus its content, as
// MESSAGE_TEMPLATE_TOKENS says; the generation prompt is 3 tokens; tool definitions are their
// JSON, in front.
import {
  CHARS_PER_TOKEN,
  chatPromptTokens,
  countTextTokens,
  hash32,
  type PromptMessage,
} from "../tokenizer.js";

const SPECIAL = /<\|[a-z_]+\|>/g;
/** Qwen's vocabulary size: token ids stay below it. */
export const VOCAB_SIZE = 151_936;

/** Tokens of a text: special markers (when parsed) one each, the rest as tokenizer.ts counts. */
export function tokenizePieces(text: string, parseSpecial = true): string[] {
  const out: string[] = [];
  const plain = (s: string) => {
    const cps = [...s];
    const k = countTextTokens(s);
    for (let i = 0; i < k; i++) {
      out.push(cps.slice(Math.floor((i * cps.length) / k), Math.floor(((i + 1) * cps.length) / k)).join(""));
    }
  };
  if (!parseSpecial) {
    plain(text);
    return out;
  }
  let last = 0;
  for (const m of text.matchAll(SPECIAL)) {
    plain(text.slice(last, m.index));
    out.push(m[0]);
    last = (m.index as number) + m[0].length;
  }
  plain(text.slice(last));
  return out;
}

/** Deterministic token ids for the pieces (a function of the piece only). */
export function tokenIds(pieces: readonly string[]): number[] {
  return pieces.map((p) => hash32(p) % VOCAB_SIZE);
}

/** Tokens the tools' JSON adds to a chat prompt (as the chat routes count it). */
export function toolsTokens(toolsJson: string | undefined): number {
  return toolsJson ? Math.ceil(toolsJson.length / CHARS_PER_TOKEN) : 0;
}

/** A chat request's prompt tokens, exactly as the personalities' chat route counts them. */
export function chatTokens(messages: readonly PromptMessage[], toolsJson?: string): number {
  return chatPromptTokens(messages, toolsTokens(toolsJson));
}

/** The chat template applied to messages (what llama.cpp's /apply-template answers). */
export function renderChat(
  messages: readonly PromptMessage[],
  toolsJson?: string,
  addGenerationPrompt = true,
): string {
  // A content that itself contains `<|name|>` counts differently here than on the chat route.
  let out = toolsJson ?? "";
  for (const m of messages) {
    const role = /^[a-z_]+$/.test(m.role) ? m.role : "user";
    out += `<|im_start|><|${role}|><|sep|>${m.content}<|im_end|>`;
  }
  if (addGenerationPrompt) out += "<|im_start|><|assistant|><|sep|>";
  return out;
}
