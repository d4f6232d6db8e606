import { describe, expect, it } from "vitest";
import { errorUnit } from "./forward-stream.js";
import { ndjsonTap, openaiReport, sseTap } from "./framing.js";

const b = (s: string) => Buffer.from(s);
const text = (x: Buffer | undefined) => (x === undefined ? "" : x.toString("utf8"));

describe("ndjsonTap", () => {
  it("forwards whole lines only, holding a split line until it completes", () => {
    const tap = ndjsonTap();
    const out: string[] = [];
    out.push(text(tap.push(b('{"a":1}\n{"b":'))));
    expect(tap.clean).toBe(false);
    out.push(text(tap.push(b("2}\n"))));
    expect(tap.clean).toBe(true);
    out.push(text(tap.push(b('{"done":true,"prompt_eval_count":12,"eval_count":3}\n'))));
    expect(out).toEqual(['{"a":1}\n', '{"b":2}\n', '{"done":true,"prompt_eval_count":12,"eval_count":3}\n']);
    expect(tap.end()).toBeUndefined();
    expect(tap.report()).toEqual({ promptTokens: 12, outputTokens: 3, done: true, error: undefined });
  });

  it("reports the last line even when it lacks its newline, and an error line", () => {
    const tap = ndjsonTap();
    expect(text(tap.push(b('{"done":false}\n{"error":"runner crashed"}')))).toBe('{"done":false}\n');
    expect(text(tap.end())).toBe('{"error":"runner crashed"}');
    expect(tap.report()).toMatchObject({ done: false, error: "runner crashed" });
  });

  it("reads Ollama's prompt_eval_cached_count from the final chunk", () => {
    const tap = ndjsonTap();
    tap.push(
      b(
        `${JSON.stringify({ done: true, prompt_eval_count: 50, prompt_eval_cached_count: 44, eval_count: 3 })}\n`,
      ),
    );
    expect(tap.report()).toMatchObject({ promptTokens: 50, cachedTokens: 44, outputTokens: 3, done: true });
  });

  it("skips blank trailing lines when it looks for the final chunk", () => {
    const tap = ndjsonTap();
    tap.push(b('{"done":true,"prompt_eval_count":5}\n\n\n'));
    expect(tap.report()).toMatchObject({ done: true, promptTokens: 5 });
  });
});

describe("sseTap", () => {
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const token = ev({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: null }] });
  const finish = ev({ choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }] });
  const usage = ev({ choices: [], usage: { prompt_tokens: 40, completion_tokens: 2 } });

  it("hides the usage chunk it asked for, and still reads it", () => {
    const tap = sseTap(true);
    const out = text(tap.push(b(token + token.slice(0, 10))));
    expect(out).toBe(token);
    const rest = text(tap.push(b(token.slice(10) + finish + usage + "data: [DONE]\n\n")));
    expect(rest).toBe(token + finish + "data: [DONE]\n\n");
    // The finish event's reason is read too (the call's span reports it: docs/tracing.md).
    expect(tap.report()).toEqual({
      promptTokens: 40,
      outputTokens: 2,
      done: true,
      error: undefined,
      finishReason: "stop",
    });
  });

  it("passes the usage chunk through when the caller asked for it", () => {
    const tap = sseTap(false);
    expect(text(tap.push(b(finish + usage + "data: [DONE]\n\n")))).toBe(finish + usage + "data: [DONE]\n\n");
  });

  it("reads the cached share of the prompt: usage details, else llama.cpp's timings", () => {
    const cachedUsage = ev({
      choices: [],
      usage: { prompt_tokens: 40, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 32 } },
    });
    const tap = sseTap(false);
    tap.push(b(finish + cachedUsage + "data: [DONE]\n\n"));
    expect(tap.report()).toMatchObject({ promptTokens: 40, cachedTokens: 32 });
    const llama = sseTap(false);
    const timed = ev({
      choices: [{ index: 0, delta: {}, finish_reason: "length" }],
      timings: { cache_n: 12 },
    });
    llama.push(b(timed + usage + "data: [DONE]\n\n"));
    expect(llama.report()).toMatchObject({ promptTokens: 40, cachedTokens: 12 });
    expect(tap.report()).not.toHaveProperty("loadMs");
  });

  it("notes an error event", () => {
    const tap = sseTap(false);
    tap.push(b(token + ev({ error: { message: "boom", type: "api_error" } })));
    expect(tap.report().error).toBe("boom");
  });
});

describe("errorUnit", () => {
  it("starts on a fresh unit when the stream broke mid-unit", () => {
    expect(errorUnit("chat", "x", true)).toBe('{"error":"x","reason":"provider-failure"}\n');
    expect(errorUnit("chat", "x", false).startsWith("\n{")).toBe(true);
    expect(errorUnit("openai", "x", true)).toMatch(/^data: \{"error":\{"message":"x"/);
  });
});

describe("the Responses API and legacy completions", () => {
  it("a Responses stream is done at response.completed, with input/output tokens from its usage", () => {
    const tap = sseTap(false);
    const events = [
      'event: response.created\ndata: {"type":"response.created","response":{"status":"in_progress","usage":null}}\n\n',
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}\n\n',
      'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":21,"output_tokens":4,"total_tokens":25}}}\n\n',
    ];
    const out = events.map((e) => text(tap.push(b(e))));
    expect(out).toEqual(events);
    expect(tap.report()).toEqual({ promptTokens: 21, outputTokens: 4, done: true, error: undefined });
  });

  it("a whole Responses answer and a legacy completion report their counts", () => {
    expect(
      openaiReport({ object: "response", status: "completed", usage: { input_tokens: 9, output_tokens: 2 } }),
    ).toEqual({ promptTokens: 9, outputTokens: 2, done: true, error: undefined });
    expect(
      openaiReport({
        object: "text_completion",
        choices: [{ text: "x", finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 1 },
      }),
    ).toEqual({ promptTokens: 5, outputTokens: 1, done: true, error: undefined, finishReason: "stop" });
  });
});
