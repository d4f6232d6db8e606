// The vLLM personality over HTTP: its routes and shapes, /tokenize against the chat route,
// /metrics under concurrent requests (slots, queue, KV cache), context overflow, /api/* 404,
// and the official openai client. Time runs on a ManualClock where it matters, so nothing
// depends on wall-clock speed.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { postJson } from "../../../test/helpers/emulator-http.js";
import {
  emulatorStarter,
  samples,
  scrape,
  scrapeUntil,
  value,
} from "../../../test/helpers/engine-emulator.js";
import { ManualClock } from "../clock.js";
import { startEmulator } from "../index.js";

const vllm = emulatorStarter({ engine: "vllm", models: { "qwen3:8b": 4863 }, outputTokens: 8 });

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "qwen3:8b",
  messages: [
    { role: "system" as const, content: "You are terse." },
    { role: "user" as const, content },
  ],
  ...extra,
});

describe("vLLM personality: routes", () => {
  it("lists its one model with max_model_len, answers /health and /version, and 404s Ollama's /api/*", async () => {
    const emu = await vllm({ contextLength: 8192 });
    const models = (await (await fetch(`${emu.url}/v1/models`)).json()) as {
      object: string;
      data: Array<Record<string, unknown>>;
    };
    expect(models.object).toBe("list");
    expect(models.data).toHaveLength(1);
    expect(models.data[0]).toMatchObject({
      id: "qwen3:8b",
      object: "model",
      owned_by: "vllm",
      max_model_len: 8192,
    });
    expect((await fetch(`${emu.url}/health`)).status).toBe(200);
    expect(((await (await fetch(`${emu.url}/version`)).json()) as { version: string }).version).toMatch(
      /^0\./,
    );
    for (const [method, path] of [
      ["GET", "/api/tags"],
      ["GET", "/api/ps"],
      ["POST", "/api/chat"],
      ["POST", "/api/generate"],
    ] as const) {
      const res = await fetch(`${emu.url}${path}`, { method, body: method === "POST" ? "{}" : undefined });
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ detail: "Not Found" });
    }
  });

  it("answers an unknown model with vLLM's 404", async () => {
    const emu = await vllm();
    const res = await postJson(`${emu.url}/v1/chat/completions`, { ...chat("hi"), model: "llama3.1:8b" });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toMatchObject({
      object: "error",
      type: "NotFoundError",
      message: "The model `llama3.1:8b` does not exist.",
    });
  });

  it("counts with /tokenize what the chat and completion routes count", async () => {
    const emu = await vllm();
    const tools = [
      {
        type: "function",
        function: {
          name: "get_weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
        },
      },
    ];
    const body = chat("What is the weather in Lyon today, and should I take an umbrella?", { tools });
    const tok = JSON.parse((await postJson(`${emu.url}/tokenize`, body)).text);
    const done = JSON.parse((await postJson(`${emu.url}/v1/chat/completions`, body)).text);
    expect(tok.count).toBeGreaterThan(20);
    expect(tok.count).toBe(done.usage.prompt_tokens);
    expect(tok.tokens).toHaveLength(tok.count);
    expect(tok.max_model_len).toBe(40960);
    const prompt = "Once upon a time, in a data centre far away,";
    const ptok = JSON.parse((await postJson(`${emu.url}/tokenize`, { model: "qwen3:8b", prompt })).text);
    const comp = JSON.parse(
      (await postJson(`${emu.url}/v1/completions`, { model: "qwen3:8b", prompt })).text,
    );
    expect(ptok.count).toBe(comp.usage.prompt_tokens);
    expect(comp.object).toBe("text_completion");
  });

  it("refuses a prompt over max_model_len with vLLM's 400", async () => {
    const emu = await vllm({ contextLength: 64 });
    const long = "word ".repeat(200);
    const res = await postJson(`${emu.url}/v1/chat/completions`, chat(long));
    expect(res.status).toBe(400);
    const err = JSON.parse(res.text);
    expect(err).toMatchObject({ object: "error", type: "BadRequestError", code: 400 });
    expect(err.message).toMatch(
      /^This model's maximum context length is 64 tokens\. However, you requested \d+ tokens in the messages, Please reduce the length of the messages\.$/,
    );
    const withMax = await postJson(`${emu.url}/v1/chat/completions`, chat("hello", { max_tokens: 60 }));
    expect(withMax.status).toBe(400);
    expect(JSON.parse(withMax.text).message).toMatch(/\(\d+ in the messages, 60 in the completion\)/);
  });

  it("refuses more than one model at start", async () => {
    await expect(
      startEmulator({
        listen: "127.0.0.1:0",
        engine: "vllm",
        models: { "qwen3:8b": 4863, "qwen3:14b": 9000 },
      }),
    ).rejects.toThrow(/vLLM serves exactly one model; got 2/);
  });
});

describe("vLLM personality: slots, queue and KV cache", () => {
  it("runs up to its slots, queues the rest, and fills the KV cache with tokens", async () => {
    const clock = new ManualClock();
    const emu = await vllm({ clock, slots: 2, kvCacheTokens: 8192, contextLength: 4096, outputTokens: 40 });
    const calls = [1, 2, 3].map((i) =>
      postJson(`${emu.url}/v1/chat/completions`, chat(`request number ${i}`, { stream: true })),
    );
    const first = await scrapeUntil(
      emu.url,
      (m) => value(m, "vllm:num_requests_running") === 2 && value(m, "vllm:num_requests_waiting") === 1,
    );
    expect(samples(first, "vllm:num_requests_running")[0]?.labels).toEqual({
      model_name: "qwen3:8b",
      engine: "0",
    });
    const atStart = value(first, "vllm:kv_cache_usage_perc");
    expect(atStart).toBeGreaterThan(0);
    expect(value(first, "vllm:gpu_cache_usage_perc")).toBe(atStart);
    clock.advance(300); // about 15 tokens each at 50 tokens/s
    const mid = await scrape(emu.url);
    expect(value(mid, "vllm:kv_cache_usage_perc")).toBeGreaterThan(atStart);
    expect(value(mid, "vllm:num_requests_waiting")).toBe(1);
    clock.runAll();
    const answers = await Promise.all(calls);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const after = await scrape(emu.url);
    expect(value(after, "vllm:num_requests_running")).toBe(0);
    expect(value(after, "vllm:kv_cache_usage_perc")).toBe(0);
    expect(value(after, "vllm:generation_tokens_total")).toBe(120);
  });

  it("makes a request wait when the KV cache is full even with a free slot", async () => {
    const clock = new ManualClock();
    // Each request needs its prompt plus 40 tokens: two do not fit in 100 tokens.
    const emu = await vllm({ clock, slots: 8, kvCacheTokens: 100, contextLength: 100, outputTokens: 40 });
    const calls = [1, 2].map((i) => postJson(`${emu.url}/v1/chat/completions`, chat(`kv ${i}`)));
    await scrapeUntil(
      emu.url,
      (m) => value(m, "vllm:num_requests_running") === 1 && value(m, "vllm:num_requests_waiting") === 1,
    );
    clock.runAll();
    expect((await Promise.all(calls)).map((a) => a.status)).toEqual([200, 200]);
  });

  it("serves only the old KV-cache name with --engine-version legacy", async () => {
    const emu = await vllm({ engineVersion: "legacy" });
    const m = await scrape(emu.url);
    expect(samples(m, "vllm:gpu_cache_usage_perc")).toHaveLength(1);
    expect(samples(m, "vllm:kv_cache_usage_perc")).toHaveLength(0);
  });
});

describe("vLLM personality: faults and the admin API", () => {
  it("takes the emulator's faults, shows its one model in /_emulator/state, and keeps it over a reset", async () => {
    const emu = await vllm();
    const state = (await (await fetch(`${emu.url}/_emulator/state`)).json()) as {
      models: Array<{ name: string; state: string; numCtx: number }>;
    };
    expect(state.models).toEqual([
      expect.objectContaining({ name: "qwen3:8b", state: "ready", numCtx: 40960 }),
    ]);
    emu.setFaults([{ kind: "error", count: 1, status: 503 }]);
    expect((await postJson(`${emu.url}/v1/chat/completions`, chat("hi"))).status).toBe(503);
    emu.setFaults([{ kind: "drop", afterTokens: 2 }]);
    await expect(postJson(`${emu.url}/v1/chat/completions`, chat("hi", { stream: true }))).rejects.toThrow();
    emu.reset();
    expect((await postJson(`${emu.url}/v1/chat/completions`, chat("hi"))).status).toBe(200);
    expect(emu.gpu().runners.map((r) => r.model)).toEqual(["qwen3:8b"]);
  });
});

describe("vLLM personality: the official openai client", () => {
  it("chats, streams with usage, calls tools and follows a JSON schema", async () => {
    const emu = await vllm();
    const client = new OpenAI({ baseURL: `${emu.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const done = await client.chat.completions.create(chat("Say hello."));
    expect(done.choices[0]?.message.content).toMatch(/\.$/);
    expect(done.usage?.completion_tokens).toBe(8);
    const stream = await client.chat.completions.create({
      ...chat("Say hello."),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(done.choices[0]?.message.content);
    expect(usage?.prompt_tokens).toBe(done.usage?.prompt_tokens);
    const tools = await client.chat.completions.create({
      ...chat("What is the weather in Lyon?"),
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            parameters: { type: "object", properties: { city: { type: "string" } } },
          },
        },
      ],
    });
    expect(tools.choices[0]?.finish_reason).toBe("tool_calls");
    expect(tools.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      type: "function",
      function: { name: "get_weather" },
    });
    const json = await client.chat.completions.create({
      ...chat("Give me a city."),
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "city",
          schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        },
      },
    });
    expect(typeof JSON.parse(json.choices[0]?.message.content ?? "").name).toBe("string");
  });
});
