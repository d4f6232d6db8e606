import { describe, expect, it } from "vitest";
import { readAnswerTail, TAIL_READ_MIN_BYTES } from "./answer-tail.js";

const vectors = (n: number) =>
  Array.from({ length: n }, (_, i) => Array.from({ length: 768 }, (_, k) => ((i + k) % 97) / 1000));
const big = (o: unknown) => Buffer.from(JSON.stringify(o));

describe("reading an embedding answer's counts from its tail", () => {
  it("reads Ollama's and OpenAI's trailing fields exactly as a full parse would", () => {
    const ollama = {
      model: "m",
      embeddings: vectors(4),
      total_duration: 5,
      load_duration: 0,
      prompt_eval_count: 42,
    };
    const t = readAnswerTail(big(ollama))!;
    expect(t).toEqual({ total_duration: 5, load_duration: 0, prompt_eval_count: 42 });
    const openai = {
      object: "list",
      data: vectors(4).map((embedding, index) => ({ object: "embedding", embedding, index })),
      model: "m",
      usage: { prompt_tokens: 9, total_tokens: 9 },
    };
    expect(readAnswerTail(big(openai))).toEqual({ model: "m", usage: { prompt_tokens: 9, total_tokens: 9 } });
    // The vectors last: nothing follows them, so there are no counts to read (and none lost).
    expect(readAnswerTail(big({ prompt_eval_count: 3, embeddings: vectors(4) }))).toEqual({});
  });

  it("gives up (the caller then parses whole) on any other shape, never reading a nested field", () => {
    // A count nested in an object after the last array is not a top-level count.
    expect(
      readAnswerTail(big({ embeddings: vectors(4), meta: { v: [1], prompt_eval_count: 5 } })),
    ).toBeUndefined();
    expect(
      readAnswerTail(big({ a: { embeddings: vectors(4), prompt_eval_count: 5 }, b: 1 })),
    ).toBeUndefined();
    // A "]" inside a trailing string.
    expect(readAnswerTail(big({ embeddings: vectors(4), model: "x]y" }))).toBeUndefined();
    // Not an object, cut short, or too small to be worth it.
    expect(readAnswerTail(big(vectors(4)))).toBeUndefined();
    const whole = big({ embeddings: vectors(4), prompt_eval_count: 1 });
    expect(readAnswerTail(whole.subarray(0, whole.length - 1))).toBeUndefined();
    const small = big({ embeddings: [[0.1]], prompt_eval_count: 1 });
    expect(small.length).toBeLessThan(TAIL_READ_MIN_BYTES);
    expect(readAnswerTail(small)).toBeUndefined();
  });
});
