// Generated tokens to text, one token at a time (docs/rules/engines.md "A real llama.cpp
// engine"): a character split over byte tokens comes out whole once its last byte is generated,
// never as a replacement character; each piece is decoded after the tokens before it, so a
// SentencePiece word's leading space is kept or dropped as the tokenizer says.
import type { Token } from "node-llama-cpp";

/** A character still incomplete after this many byte tokens is sent as it decodes. */
const MAX_PENDING = 4;
/** Tokens of context passed to the detokenizer. */
const LOOKBEHIND = 8;

export type Detokenize = (tokens: readonly Token[], lastTokens: readonly Token[]) => string;

export class TokenText {
  private pending: Token[] = [];
  private last: Token[] = [];

  constructor(private readonly detokenize: Detokenize) {}

  /** The text this token completes ("" while a character is still incomplete). */
  push(token: Token): string {
    this.pending.push(token);
    const text = this.detokenize(this.pending, this.last);
    if (text.endsWith("\uFFFD") && this.pending.length < MAX_PENDING) return "";
    this.last = [...this.last, ...this.pending].slice(-LOOKBEHIND);
    this.pending = [];
    return text;
  }

  /** Whatever is pending, decoded as it is. */
  flush(): string {
    if (this.pending.length === 0) return "";
    const text = this.detokenize(this.pending, this.last);
    this.pending = [];
    return text;
  }
}
