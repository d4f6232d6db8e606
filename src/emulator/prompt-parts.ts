// What the emulator's prompt caches key on (docs/rules/engines.md "Prompt caches"): a chat as
// its tools and messages as the template renders them, then the generation prompt; raw text
// (generate with `raw`, legacy completions) as blocks of 64 tokens, as vLLM hashes fixed blocks.
// An assistant message is its header (the generation prompt's 3 tokens) then its content and end
// marker, so the answer a turn generated is, part for part, the message the next turn sends back.

import { EMPTY_CHAIN, extendChain, type PromptChain, type PromptPart } from "./prompt-cache.js";
import { countTextTokens, GENERATION_PROMPT_TOKENS, messageTokens, type PromptMessage } from "./tokenizer.js";

/** Code points of a raw-text block (64 tokens at 3.5 code points a token). */
const BLOCK_CHARS = 224;

/** The assistant's header: what the generation prompt renders. */
const ASSISTANT_HEADER: PromptPart = { text: "<assistant>", tokens: GENERATION_PROMPT_TOKENS };

function messageParts(m: PromptMessage): PromptPart[] {
  if (m.role === "assistant") return [ASSISTANT_HEADER, answerPart(m.content)];
  return [{ text: `${m.role}\n${m.content}`, tokens: messageTokens(m) }];
}

/** A chat prompt: its tools (as their JSON), its messages, then the generation prompt. */
export function chatChain(messages: readonly PromptMessage[], toolsJson?: string): PromptChain {
  const parts: PromptPart[] = [];
  if (toolsJson) parts.push({ text: `tools\n${toolsJson}`, tokens: Math.ceil(toolsJson.length / 3.5) });
  for (const m of messages) parts.push(...messageParts(m));
  parts.push(ASSISTANT_HEADER);
  return extendChain(EMPTY_CHAIN, parts);
}

/** A raw prompt, in blocks: two prompts share the blocks they have in common from the start. */
export function textChain(text: string): PromptChain {
  const points = [...text];
  const parts: PromptPart[] = [];
  for (let i = 0; i < points.length; i += BLOCK_CHARS) {
    const block = points.slice(i, i + BLOCK_CHARS).join("");
    parts.push({ text: block, tokens: countTextTokens(block) });
  }
  return extendChain(EMPTY_CHAIN, parts);
}

/** An answer after its header: its content and the message's end marker. */
export function answerPart(content: string): PromptPart {
  return { text: `${content}\n<end>`, tokens: countTextTokens(content) + 1 };
}
