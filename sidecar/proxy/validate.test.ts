import { describe, expect, it } from "vitest";
import { KubemootError, wireRow } from "../../src/errors/index.js";
import { callCandidates, parseCallHeaders } from "./kubemoot-headers.js";
import { applyNumCtx, decideNumCtx } from "./num-ctx.js";
import { goDurationMs, parseChat, parseGenerate, parseOpenAIChat } from "./validate.js";

function fails(fn: () => unknown): KubemootError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(KubemootError);
    return err as KubemootError;
  }
  throw new Error("did not fail");
}

describe("request validation", () => {
  it("reads a chat body: normalised model, prompt chars with tools, num_ctx and num_predict", () => {
    const c = parseChat({
      model: "qwen3",
      messages: [
        { role: "system", content: "abc" },
        { role: "user", content: "hello" },
      ],
      tools: [{ type: "function", function: { name: "f", description: "dd" } }],
      options: { num_ctx: 4096, num_predict: 100 },
    });
    expect(c).toMatchObject({
      model: "qwen3:latest",
      stream: true,
      promptChars: 3 + 5 + 1 + 2,
      numCtx: 4096,
      maxOutputTokens: 100,
      loadOnly: false,
      unload: false,
    });
  });

  it("tells load and unload requests apart", () => {
    expect(parseGenerate({ model: "m:1" })).toMatchObject({ loadOnly: true, unload: false, promptChars: 0 });
    expect(parseGenerate({ model: "m:1", keep_alive: 0 })).toMatchObject({ unload: true });
    expect(parseChat({ model: "m:1", keep_alive: "0s" })).toMatchObject({ unload: true });
    expect(parseChat({ model: "m:1", keep_alive: "5m", messages: [] })).toMatchObject({ unload: false });
  });

  it("maps OpenAI max_tokens / max_completion_tokens and include_usage", () => {
    const o = parseOpenAIChat({
      model: "m:1",
      messages: [{ role: "user", content: [{ type: "text", text: "abcd" }] }],
      max_completion_tokens: 7,
      max_tokens: 9,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(o).toMatchObject({ promptChars: 4, maxOutputTokens: 7, stream: true, includeUsage: true });
    expect(parseOpenAIChat({ model: "m:1", messages: [{ role: "user", content: "x" }] }).stream).toBe(false);
  });

  it("names the field of every type error", () => {
    expect(fails(() => parseChat({})).message).toBe("model: is required");
    expect(fails(() => parseChat({ model: "m", stream: 1 })).message).toMatch(/^stream: /);
    expect(fails(() => parseChat({ model: "m", messages: [{ role: 1 }] })).message).toMatch(
      /^messages\[0\]\.role/,
    );
    expect(fails(() => parseChat({ model: "m", options: { num_ctx: 1.5 } })).message).toMatch(
      /^options\.num_ctx/,
    );
    expect(fails(() => parseChat({ model: "m", options: { num_ctx: -1 } })).message).toMatch(/negative/);
    expect(fails(() => parseChat({ model: "m", keep_alive: "3600" })).message).toMatch(/^keep_alive/);
    expect(fails(() => parseChat({ model: "m", tools: [1] })).message).toMatch(/^tools\[0\]/);
    expect(fails(() => parseOpenAIChat({ model: "m", messages: [{ content: "x" }] })).message).toMatch(
      /role/,
    );
    expect(wireRow(fails(() => parseChat({ model: "m", keep_alive: true }))).http).toBe(400);
  });

  it("parses Go durations", () => {
    expect(goDurationMs("5m")).toBe(300_000);
    expect(goDurationMs("1h30m")).toBe(5_400_000);
    expect(goDurationMs("-1s")).toBe(-1000);
    expect(goDurationMs("0")).toBe(0);
    expect(goDurationMs("3600")).toBeUndefined();
    expect(goDurationMs("5 m")).toBeUndefined();
  });
});

describe("X-Kubemoot headers and candidates", () => {
  it("parses the headers and rejects bad ones with the header's name", () => {
    expect(
      parseCallHeaders({
        "x-kubemoot-agent": "crew/a",
        "x-kubemoot-phase": "Triage",
        "x-kubemoot-candidates": '[{"model":"qwen3","score":50}]',
        "x-kubemoot-tolerance": "5",
      }),
    ).toMatchObject({
      agent: "crew/a",
      phase: "triage",
      candidates: [{ model: "qwen3:latest", score: 50 }],
      tolerance: 5,
      cannotWait: false,
    });
    expect(fails(() => parseCallHeaders({ "x-kubemoot-candidates": "[]" })).message).toMatch(
      /^X-Kubemoot-Candidates/,
    );
    expect(fails(() => parseCallHeaders({ "x-kubemoot-tolerance": "lots" })).message).toMatch(
      /^X-Kubemoot-Tolerance/,
    );
  });

  it("reads X-Kubemoot-Priority as a band, and names the header for one it does not know", () => {
    expect(parseCallHeaders({ "x-kubemoot-priority": " Batch " }).priority).toBe("batch");
    expect(parseCallHeaders({}).priority).toBeUndefined();
    const err = fails(() => parseCallHeaders({ "x-kubemoot-priority": "urgent" }));
    expect(err.message).toBe(
      'X-Kubemoot-Priority: expected one of interactive, standard, batch, got "urgent"',
    );
  });

  it("puts the requested model first with its listed score, else 100", () => {
    const list = [
      { model: "a:1", score: 80 },
      { model: "b:1", score: 70 },
    ];
    expect(callCandidates("b:1", list)).toEqual([
      { model: "b:1", score: 70 },
      { model: "a:1", score: 80 },
    ]);
    expect(callCandidates("c:1", list)[0]).toEqual({ model: "c:1", score: 100 });
  });
});

describe("num_ctx policy", () => {
  const base = { callerNumCtx: undefined, contextLength: 8192, promptTokens: 1000, outputTokens: 0 };
  it("pin: always the placement's context; unknown context keeps the caller's", () => {
    expect(decideNumCtx({ ...base, policy: "pin", callerNumCtx: 2048 })).toEqual({
      kind: "set",
      value: 8192,
    });
    expect(decideNumCtx({ ...base, policy: "pin" })).toEqual({ kind: "set", value: 8192 });
    expect(decideNumCtx({ ...base, policy: "pin", contextLength: 0, callerNumCtx: 2048 })).toEqual({
      kind: "keep",
      value: 2048,
    });
  });
  it("pin: a larger num_ctx that the prompt and output need is refused; one they do not need is pinned", () => {
    expect(decideNumCtx({ ...base, policy: "pin", callerNumCtx: 16384, outputTokens: 8000 })).toMatchObject({
      kind: "refuse",
      largestContext: 8192,
    });
    expect(decideNumCtx({ ...base, policy: "pin", callerNumCtx: 16384, outputTokens: 100 })).toEqual({
      kind: "set",
      value: 8192,
    });
  });
  it("pass: forwards the caller's value, refusing one that cannot hold the prompt", () => {
    expect(decideNumCtx({ ...base, policy: "pass", callerNumCtx: 2048 })).toEqual({
      kind: "keep",
      value: 2048,
    });
    expect(decideNumCtx({ ...base, policy: "pass", callerNumCtx: 512 }).kind).toBe("refuse");
  });
  it("applies a pinned value into options, keeping the other options", () => {
    const body: Record<string, unknown> = { options: { num_ctx: 1, temperature: 0 } };
    applyNumCtx(body, { kind: "set", value: 4096 });
    expect(body.options).toEqual({ num_ctx: 4096, temperature: 0 });
    const bare: Record<string, unknown> = {};
    applyNumCtx(bare, { kind: "set", value: 4096 });
    expect(bare.options).toEqual({ num_ctx: 4096 });
  });
});
