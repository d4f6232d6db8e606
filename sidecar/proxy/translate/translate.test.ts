// The translation between Ollama's API and OpenAI's, on its own: requests, whole answers and
// streams (SSE in, NDJSON out), fed as an engine would write them, split at awkward places.
import { describe, expect, it } from "vitest";
import { translateCall } from "./index.js";
import { translateRequest } from "./ollama-to-openai.js";
import { ollamaAnswer } from "./openai-to-ollama.js";
import { plainDelta, sseToNdjsonTap } from "./stream.js";

const lines = (buf: Buffer | undefined) =>
  (buf?.toString("utf8") ?? "")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("Ollama request → OpenAI request", () => {
  it("chat: messages, images, tool calls and results, tools, format, options; the rest named as dropped", () => {
    const tools = [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }];
    const t = translateRequest(
      "chat",
      {
        model: "qwen3:8b",
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "what is this?", images: ["iVBORw0KGgo="] },
          {
            role: "assistant",
            content: "",
            tool_calls: [{ function: { name: "weather", arguments: { city: "Oslo" } } }],
          },
          { role: "tool", content: "cold", tool_name: "weather" },
          { role: "assistant", content: "hmm", thinking: "let me see" },
        ],
        tools,
        format: "json",
        options: {
          temperature: 0.2,
          top_p: 0.9,
          num_predict: 64,
          stop: ["\n"],
          seed: 7,
          num_ctx: 8192,
          mirostat: 1,
          top_k: 20,
        },
        keep_alive: "5m",
        think: true,
        stream: true,
      },
      "openai",
    );
    expect(t?.target).toBe("openai");
    expect(t?.body).toEqual({
      model: "qwen3:8b",
      messages: [
        { role: "system", content: "be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          ],
        },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "call_0", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: "tool", content: "cold", tool_call_id: "call_0" },
        { role: "assistant", content: "hmm" },
      ],
      tools,
      response_format: { type: "json_object" },
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 64,
      stop: ["\n"],
      seed: 7,
      stream: true,
      stream_options: { include_usage: true },
    });
    // top_k has no field on a generic OpenAI server.
    expect(t?.dropped.sort()).toEqual(
      [
        "keep_alive",
        "messages[4].thinking",
        "options.mirostat",
        "options.num_ctx",
        "options.top_k",
        "think",
      ].sort(),
    );
  });

  it("engine extras: vLLM takes top_k and repetition_penalty; a schema format is json_schema", () => {
    const schema = { type: "object", properties: { a: { type: "number" } } };
    const t = translateRequest(
      "chat",
      { model: "m", messages: [], stream: false, format: schema, options: { top_k: 5, repeat_penalty: 1.1 } },
      "vllm",
    );
    expect(t?.body).toMatchObject({
      top_k: 5,
      repetition_penalty: 1.1,
      stream: false,
      response_format: { type: "json_schema", json_schema: { name: "response", schema } },
    });
    expect(t?.body.stream_options).toBeUndefined();
    expect(t?.dropped).toEqual([]);
    expect(
      translateRequest("chat", { model: "m", options: { repeat_penalty: 1.1 } }, "llamacpp")?.body,
    ).toMatchObject({
      repeat_penalty: 1.1,
    });
  });

  it("generate: chat with system and images by default; raw goes to completions", () => {
    const t = translateRequest(
      "generate",
      { model: "m", prompt: "hi", system: "sys", images: ["/9j/abc"], suffix: "end", stream: false },
      "vllm",
    );
    expect(t?.target).toBe("openai");
    expect(t?.body.messages).toEqual([
      { role: "system", content: "sys" },
      {
        role: "user",
        content: [
          { type: "text", text: "hi" },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/abc" } },
        ],
      },
    ]);
    expect(t?.dropped).toEqual(["suffix"]);
    const raw = translateRequest(
      "generate",
      { model: "m", prompt: "[INST]hi", raw: true, system: "s" },
      "vllm",
    );
    expect(raw).toMatchObject({
      target: "completions",
      body: { prompt: "[INST]hi", stream: true },
      dropped: ["system"],
    });
  });

  it("embed and legacy embeddings go to /v1/embeddings", () => {
    expect(
      translateRequest("embed", { model: "e", input: ["a", "b"], truncate: false, dimensions: 8 }, "vllm"),
    ).toEqual({
      target: "openai-embed",
      body: { model: "e", input: ["a", "b"], dimensions: 8 },
      dropped: [],
    });
    expect(
      translateRequest(
        "embed",
        { model: "e", input: "a", truncate: true, keep_alive: 0, options: { num_ctx: 9 } },
        "vllm",
      )?.dropped,
    ).toEqual(["truncate", "options.num_ctx", "keep_alive"]);
    expect(translateRequest("embeddings", { model: "e", prompt: "a" }, "vllm")?.body).toEqual({
      model: "e",
      input: "a",
    });
  });

  it("OpenAI APIs are not translated", () => {
    expect(translateCall("openai", { model: "m" }, "vllm", "m")).toBeUndefined();
  });
});

describe("OpenAI answer → Ollama answer", () => {
  const completion = {
    id: "x",
    created: 1_700_000_000,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
          ],
        },
        finish_reason: "tool_calls",
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
  };

  it("chat: tool calls with object arguments, done_reason and counts", () => {
    expect(ollamaAnswer({ api: "chat", target: "openai", model: "qwen3:8b" }, completion, 0)).toEqual({
      model: "qwen3:8b",
      created_at: "2023-11-14T22:13:20.000Z",
      message: {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c1", function: { index: 0, name: "weather", arguments: { city: "Oslo" } } }],
      },
      done: true,
      done_reason: "stop",
      prompt_eval_count: 12,
      eval_count: 3,
    });
  });

  it("generate from chat or completions; embeddings in index order", () => {
    const chat = {
      choices: [{ message: { content: "hey" }, finish_reason: "length" }],
      usage: { prompt_tokens: 2, completion_tokens: 9 },
    };
    expect(ollamaAnswer({ api: "generate", target: "openai", model: "m" }, chat, 0)).toMatchObject({
      response: "hey",
      done_reason: "length",
      eval_count: 9,
    });
    const text = { choices: [{ text: "raw", finish_reason: "stop" }] };
    expect(ollamaAnswer({ api: "generate", target: "completions", model: "m" }, text, 0)).toMatchObject({
      response: "raw",
    });
    const emb = {
      data: [
        { index: 1, embedding: [2] },
        { index: 0, embedding: [1] },
      ],
      usage: { prompt_tokens: 4 },
    };
    expect(ollamaAnswer({ api: "embed", target: "openai-embed", model: "e" }, emb, 0)).toEqual({
      model: "e",
      embeddings: [[1], [2]],
      prompt_eval_count: 4,
    });
    expect(ollamaAnswer({ api: "embeddings", target: "openai-embed", model: "e" }, emb, 0)).toEqual({
      embedding: [1],
    });
  });
});

describe("OpenAI SSE → Ollama NDJSON", () => {
  const sse = (...events: unknown[]) =>
    events.map((e) => `data: ${typeof e === "string" ? e : JSON.stringify(e)}\n\n`).join("");
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
    choices: [{ index: 0, delta: d, finish_reason: finish }],
  });

  it("content, tool calls in pieces, usage and [DONE] become chunks and one final done chunk", () => {
    const tap = sseToNdjsonTap({ api: "chat", target: "openai", model: "m" }, () => 0);
    const stream = sse(
      delta({ role: "assistant", content: "Hel" }),
      delta({ content: "lo" }),
      delta({ tool_calls: [{ index: 0, id: "c1", function: { name: "weather", arguments: '{"ci' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] }),
      delta({}, "tool_calls"),
      { choices: [], usage: { prompt_tokens: 10, completion_tokens: 4 } },
      "[DONE]",
    );
    // Fed in 7-byte pieces, with CRLF endings: units are whole however the bytes come.
    const bytes = Buffer.from(stream.replaceAll("\n", "\r\n"));
    const out: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 7) {
      const o = tap.push(bytes.subarray(i, i + 7));
      if (o) out.push(o);
    }
    const rest = tap.end();
    if (rest) out.push(rest);
    const got = lines(Buffer.concat(out));
    expect(got.map((l) => (l.message as { content: string }).content)).toEqual(["Hel", "lo", "", ""]);
    expect(got[2]).toMatchObject({
      message: { tool_calls: [{ function: { name: "weather", arguments: { city: "Oslo" } } }] },
      done: false,
    });
    expect(got.at(-1)).toMatchObject({
      done: true,
      done_reason: "stop",
      prompt_eval_count: 10,
      eval_count: 4,
      model: "m",
    });
    // The span's finish reason is the engine's own (docs/tracing.md), not the translated one.
    expect(tap.report()).toEqual({
      promptTokens: 10,
      outputTokens: 4,
      done: true,
      error: undefined,
      finishReason: "tool_calls",
    });
  });

  it("the engine's cached share becomes prompt_eval_cached_count: usage details, or llama.cpp's timings", () => {
    const tap = sseToNdjsonTap({ api: "chat", target: "openai", model: "m" }, () => 0);
    const got = lines(
      tap.push(
        Buffer.from(
          sse(
            delta({ content: "x" }),
            { ...delta({}, "length"), timings: { cache_n: 30, prompt_n: 2 } },
            { choices: [], usage: { prompt_tokens: 32, completion_tokens: 1 } },
            "[DONE]",
          ),
        ),
      ),
    );
    expect(got.at(-1)).toMatchObject({ done: true, prompt_eval_count: 32, prompt_eval_cached_count: 30 });
    expect(tap.report()).toMatchObject({ promptTokens: 32, cachedTokens: 30 });
    const whole = ollamaAnswer(
      { api: "chat", target: "openai", model: "m" },
      {
        choices: [{ message: { role: "assistant", content: "x" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 32, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 31 } },
      },
      0,
    );
    expect(whole).toMatchObject({ prompt_eval_count: 32, prompt_eval_cached_count: 31 });
  });

  it("generate lines carry response; an error event becomes an error line; no finish means not done", () => {
    const tap = sseToNdjsonTap({ api: "generate", target: "completions", model: "m" }, () => 0);
    const got = lines(
      tap.push(
        Buffer.from(sse({ choices: [{ text: "a", finish_reason: null }] }, { error: { message: "boom" } })),
      ),
    );
    expect(got).toEqual([
      { model: "m", created_at: new Date(0).toISOString(), response: "a", done: false },
      { error: "boom" },
    ]);
    expect(tap.end()).toBeUndefined();
    expect(tap.report()).toMatchObject({ done: false, error: "boom" });
  });

  it("reads the common token event without parsing it, and leaves every other event to the parser", () => {
    const ev = (d: unknown) => JSON.stringify(d);
    const tricky = 'a "quoted" \\ "finish_reason":"stop","usage":{} \u00e9';
    expect(plainDelta(ev(delta({ content: tricky })), "content")).toBe(JSON.stringify(tricky));
    expect(JSON.parse(plainDelta(ev(delta({ content: tricky })), "content") ?? "")).toBe(tricky);
    expect(plainDelta(ev(delta({ content: "x" }, "stop")), "content")).toBeUndefined();
    expect(plainDelta(ev(delta({ tool_calls: [] })), "content")).toBeUndefined();
    expect(
      plainDelta(ev({ ...delta({ content: "x" }), usage: { prompt_tokens: 1 } }), "content"),
    ).toBeUndefined();
    expect(plainDelta(ev(delta({ reasoning_content: "hm", content: "" })), "content")).toBeUndefined();
    const two = {
      choices: [
        delta({ content: "a" }).choices[0],
        { index: 1, delta: { content: "b" }, finish_reason: null },
      ],
    };
    expect(plainDelta(ev(two), "content")).toBeUndefined();
    expect(plainDelta(ev({ choices: [{ index: 0, text: "t", finish_reason: null }] }), "text")).toBe('"t"');
    // Through the tap the fast and the parsed paths give the same lines.
    const tap = sseToNdjsonTap({ api: "chat", target: "openai", model: "m" }, () => 0);
    const got = lines(tap.push(Buffer.from(sse(delta({ content: tricky }), delta({ content: "" })))));
    expect(got).toEqual([
      {
        model: "m",
        created_at: new Date(0).toISOString(),
        message: { role: "assistant", content: tricky },
        done: false,
      },
    ]);
  });
});
