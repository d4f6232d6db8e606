// The SGLang personality over HTTP: /get_model_info, /get_server_info, /v1/models, /tokenize
// against /v1/completions, /metrics under concurrent requests, context overflow, /api/* 404,
// and the official openai client.
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

const sglang = emulatorStarter({ engine: "sglang", models: { "qwen3:8b": 4863 }, outputTokens: 8 });
const get = async (url: string) => (await fetch(url)).json() as Promise<Record<string, unknown>>;
const ask = (content: string) => ({ model: "qwen3:8b", messages: [{ role: "user" as const, content }] });

describe("SGLang personality: routes", () => {
  it("answers /get_model_info, /get_server_info, /v1/models and /health, and 404s /api/*", async () => {
    const emu = await sglang({ slots: 32, kvCacheTokens: 50_000 });
    expect(await get(`${emu.url}/get_model_info`)).toMatchObject({
      model_path: "qwen3:8b",
      is_generation: true,
    });
    const info = await get(`${emu.url}/get_server_info`);
    expect(info).toMatchObject({
      context_length: null,
      max_running_requests: 32,
      max_total_num_tokens: 50_000,
      status: "ready",
    });
    expect(Array.isArray(info.internal_states)).toBe(true);
    const models = (await get(`${emu.url}/v1/models`)) as { data: Array<Record<string, unknown>> };
    expect(models.data[0]).toMatchObject({ id: "qwen3:8b", owned_by: "sglang", max_model_len: 40960 });
    expect((await fetch(`${emu.url}/health`)).status).toBe(200);
    const api = await fetch(`${emu.url}/api/tags`);
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ detail: "Not Found" });
  });

  it("counts with /tokenize what /v1/completions counts, for one prompt or several", async () => {
    const emu = await sglang();
    const prompt = "Write a haiku about schedulers and GPUs.";
    const tok = JSON.parse((await postJson(`${emu.url}/tokenize`, { prompt })).text);
    const comp = JSON.parse(
      (await postJson(`${emu.url}/v1/completions`, { model: "qwen3:8b", prompt })).text,
    );
    expect(tok.count).toBe(comp.usage.prompt_tokens);
    expect(tok).toMatchObject({ max_model_len: 40960 });
    const many = JSON.parse((await postJson(`${emu.url}/v1/tokenize`, { prompt: [prompt, "hi"] })).text);
    expect(many.count).toEqual([tok.count, 1]);
    expect((await postJson(`${emu.url}/tokenize`, { prompt: 7 })).status).toBe(400);
  });

  it("refuses a prompt over the context length", async () => {
    const emu = await sglang({ contextLength: 64 });
    const res = await postJson(`${emu.url}/v1/chat/completions`, ask("word ".repeat(200)));
    expect(res.status).toBe(400);
    const err = JSON.parse(res.text);
    expect(err).toMatchObject({ object: "error", code: 400 });
    expect(err.message).toMatch(
      /^The input \(\d+ tokens\) is longer than the model's context length \(64 tokens\)\.$/,
    );
    expect((await get(`${emu.url}/get_server_info`)).context_length).toBe(64);
  });
});

describe("SGLang personality: slots and metrics", () => {
  it("shows running and queued requests and token usage in /metrics", async () => {
    const clock = new ManualClock();
    const emu = await sglang({ clock, slots: 2, kvCacheTokens: 4096, contextLength: 2048, outputTokens: 30 });
    const calls = [1, 2, 3, 4].map((i) => postJson(`${emu.url}/v1/chat/completions`, ask(`question ${i}`)));
    const m = await scrapeUntil(
      emu.url,
      (now) => value(now, "sglang:num_running_reqs") === 2 && value(now, "sglang:num_queue_reqs") === 2,
    );
    expect(samples(m, "sglang:num_running_reqs")[0]?.labels).toEqual({ model_name: "qwen3:8b" });
    const usage0 = value(m, "sglang:token_usage");
    expect(usage0).toBeCloseTo(value(m, "sglang:num_used_tokens") / 4096, 6);
    clock.advance(300);
    expect(value(await scrape(emu.url), "sglang:token_usage")).toBeGreaterThan(usage0);
    clock.runAll();
    expect((await Promise.all(calls)).map((c) => c.status)).toEqual([200, 200, 200, 200]);
    expect(value(await scrape(emu.url), "sglang:num_running_reqs")).toBe(0);
  });
});

describe("SGLang personality: the official openai client", () => {
  it("chats and streams", async () => {
    const emu = await sglang();
    const client = new OpenAI({ baseURL: `${emu.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const done = await client.chat.completions.create(ask("Say hello."));
    let text = "";
    for await (const chunk of await client.chat.completions.create({ ...ask("Say hello."), stream: true }))
      text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(done.choices[0]?.message.content);
  });
});
