// An embedding answer is almost all vectors (hundreds of kB of floats) followed by a few
// counts. The proxy needs only the counts, so it reads the top-level fields after the last
// array instead of parsing every float: JSON.parse of the whole answer cost the proxy more CPU
// than the engine spent writing it (docs/benchmarks.md, bench proxy's embeddings case).

import { parseObject } from "./framing.js";

const CLOSE_BRACKET = 0x5d; // "]"
const OPEN_BRACE = 0x7b; // "{"
/** Answers smaller than this are parsed whole: the saving is not worth the special case. */
export const TAIL_READ_MIN_BYTES = 16 * 1024;
/** The tail after the last array is a handful of counts; more than this is not that shape. */
const MAX_TAIL_BYTES = 4096;

/**
 * The top-level fields that follow an answer's last array (`{"embeddings":[...],
 * "prompt_eval_count":7}` gives `{prompt_eval_count: 7}`), or undefined when the answer does not
 * have that shape; then the caller parses it whole. Exact or nothing: the tail, opened as an
 * object, must parse and close exactly one object, which can only be the answer's outermost
 * one, so no field nested deeper is ever read as a top-level field.
 */
export function readAnswerTail(buf: Buffer): Record<string, unknown> | undefined {
  if (buf.length < TAIL_READ_MIN_BYTES || firstNonSpace(buf) !== OPEN_BRACE) return undefined;
  const close = buf.lastIndexOf(CLOSE_BRACKET);
  if (close < 0 || buf.length - close - 1 > MAX_TAIL_BYTES) return undefined;
  const tail = buf.toString("utf8", close + 1).trimEnd();
  // `,"a":1}` (fields after the array) or `}` (the array was the last field).
  const text = tail === "}" ? "{}" : tail.startsWith(",") ? `{${tail.slice(1)}` : undefined;
  return text === undefined ? undefined : parseObject(text);
}

function firstNonSpace(buf: Buffer): number | undefined {
  for (let i = 0; i < buf.length && i < 64; i++) {
    const c = buf[i] as number;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
  }
  return undefined;
}

/**
 * A buffered answer as an object: from its tail when `vectorsOnly` (an embedding answer passed on
 * as is) and the tail has the shape, else parsed whole; undefined when it is not a JSON object.
 */
export function readAnswer(buf: Buffer, vectorsOnly: boolean): Record<string, unknown> | undefined {
  return (vectorsOnly ? readAnswerTail(buf) : undefined) ?? parseObject(buf);
}
