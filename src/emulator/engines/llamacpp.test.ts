// The llama.cpp server personality over HTTP: /health, /props, /slots, /v1/models, /tokenize
// and /apply-template against the chat route, /metrics under concurrent requests, context
// overflow, /api/* 404, and the official openai client (chat and stream).
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

const llamacpp = emulatorStarter({
  engine: "llamacpp",
  models: { "qwen3:8b": 4863 },
  contextLength: 8192,
  outputTokens: 8,
});

const messages = [
  { role: "system" as const, content: "You are terse." },
  { role: "user" as const, content: "Name three rivers of France, with one line about each." },
];
const get = async (url: string) => (await fetch(url)).json() as Promise<Record<string, unknown>>;

describe("llama.cpp personality: routes", () => {
  it("answers /health, /props, /slots and /v1/models in llama-server's shapes", async () => {
    const emu = await llamacpp();
    expect(await get(`${emu.url}/health`)).toEqual({ status: "ok" });
    const props = await get(`${emu.url}/props`);
    expect(props.total_slots).toBe(4); // newer builds start 4 slots by default
    expect((props.default_generation_settings as { n_ctx: number }).n_ctx).toBe(8192);
    const slots = (await (await fetch(`${emu.url}/slots`)).json()) as Array<Record<string, unknown>>;
    expect(slots.map((s) => [s.id, s.n_ctx, s.is_processing])).toEqual([
      [0, 8192, false],
      [1, 8192, false],
      [2, 8192, false],
      [3, 8192, false],
    ]);
    const models = (await get(`${emu.url}/v1/models`)) as { data: Array<Record<string, unknown>> };
    expect(models.data).toHaveLength(1);
    expect(models.data[0]).toMatchObject({
      id: "qwen3:8b",
      owned_by: "llamacpp",
      meta: { n_ctx_train: 40960 },
    });
    const api = await fetch(`${emu.url}/api/tags`);
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ error: { code: 404, type: "not_found_error" } });
    expect((await postJson(`${emu.url}/api/chat`, { model: "qwen3:8b", messages })).status).toBe(404);
  });

  it("serves its one model whatever the request names", async () => {
    const emu = await llamacpp();
    const res = await postJson(`${emu.url}/v1/chat/completions`, { model: "gpt-4o", messages });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).model).toBe("qwen3:8b");
  });

  it("counts with /apply-template + /tokenize what the chat route counts, and /tokenize a prompt as /v1/completions does", async () => {
    const emu = await llamacpp();
    const { prompt } = JSON.parse((await postJson(`${emu.url}/apply-template`, { messages })).text);
    const tok = JSON.parse((await postJson(`${emu.url}/tokenize`, { content: prompt })).text);
    const done = JSON.parse(
      (await postJson(`${emu.url}/v1/chat/completions`, { model: "m", messages })).text,
    );
    expect(tok.tokens.length).toBe(done.usage.prompt_tokens);
    const text = "The quick brown fox jumps over the lazy dog.";
    const plain = JSON.parse(
      (await postJson(`${emu.url}/tokenize`, { content: text, with_pieces: true })).text,
    );
    expect(plain.tokens.map((t: { piece: string }) => t.piece).join("")).toBe(text);
    const comp = JSON.parse((await postJson(`${emu.url}/v1/completions`, { prompt: text })).text);
    expect(plain.tokens.length).toBe(comp.usage.prompt_tokens);
    expect((await postJson(`${emu.url}/tokenize`, { content: 3 })).status).toBe(400);
  });

  it("refuses a prompt over n_ctx with exceed_context_size_error", async () => {
    const emu = await llamacpp({ contextLength: 64 });
    const res = await postJson(`${emu.url}/v1/chat/completions`, {
      messages: [{ role: "user", content: "word ".repeat(200) }],
    });
    expect(res.status).toBe(400);
    const { error } = JSON.parse(res.text);
    expect(error).toMatchObject({ code: 400, type: "exceed_context_size_error", n_ctx: 64 });
    expect(error.message).toBe(
      `request (${error.n_prompt_tokens} tokens) exceeds the available context size (64 tokens), try increasing it`,
    );
  });
});

describe("llama.cpp personality: slots and metrics", () => {
  it("shows processing and deferred requests in /metrics and /slots", async () => {
    const clock = new ManualClock();
    const emu = await llamacpp({ clock, slots: 1, outputTokens: 20 });
    const calls = [1, 2].map((i) =>
      postJson(`${emu.url}/v1/chat/completions`, { messages: [{ role: "user", content: `call ${i}` }] }),
    );
    const m = await scrapeUntil(
      emu.url,
      (now) =>
        value(now, "llamacpp:requests_processing") === 1 && value(now, "llamacpp:requests_deferred") === 1,
    );
    // Current builds export no KV-cache gauge; labels are not used.
    expect(samples(m, "llamacpp:kv_cache_usage_ratio")).toHaveLength(0);
    expect(samples(m, "llamacpp:requests_processing")[0]?.labels).toEqual({});
    const busy = (await (await fetch(`${emu.url}/slots`)).json()) as Array<{ is_processing: boolean }>;
    expect(busy.map((s) => s.is_processing)).toEqual([true]);
    expect((await fetch(`${emu.url}/slots?fail_on_no_slot=1`)).status).toBe(503);
    clock.runAll();
    expect((await Promise.all(calls)).map((c) => c.status)).toEqual([200, 200]);
    expect(value(await scrape(emu.url), "llamacpp:tokens_predicted_total")).toBe(40);
  });

  it("exports the KV-cache gauges of older builds with --engine-version legacy, rising with tokens", async () => {
    const clock = new ManualClock();
    const emu = await llamacpp({ clock, engineVersion: "legacy", outputTokens: 30 });
    const call = postJson(`${emu.url}/v1/chat/completions`, { messages });
    const start = await scrapeUntil(emu.url, (now) => value(now, "llamacpp:requests_processing") === 1);
    const used0 = value(start, "llamacpp:kv_cache_tokens");
    expect(used0).toBeGreaterThan(0);
    expect(value(start, "llamacpp:kv_cache_usage_ratio")).toBeCloseTo(used0 / 8192, 6);
    clock.advance(400);
    expect(value(await scrape(emu.url), "llamacpp:kv_cache_tokens")).toBeGreaterThan(used0);
    clock.runAll();
    expect((await call).status).toBe(200);
  });
});

describe("llama.cpp personality: the official openai client", () => {
  it("chats and streams", async () => {
    const emu = await llamacpp();
    const client = new OpenAI({ baseURL: `${emu.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const done = await client.chat.completions.create({ model: "any", messages });
    const stream = await client.chat.completions.create({
      model: "any",
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let completion = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      completion = chunk.usage?.completion_tokens ?? completion;
    }
    expect(text).toBe(done.choices[0]?.message.content);
    expect(completion).toBe(8);
  });
});
