// Issue 30: `kubemoot-scheduler engine`, a real llama.cpp (node-llama-cpp, CPU, one thread) in a
// process of its own, on a generated model, spoken to over HTTP as llama-server is: its routes
// and shapes, exact token counts, the length check (a prompt that fills the slot is refused,
// never cut), prompt caches per slot, parallel slots and deferred requests, greedy determinism,
// bad input, and a model llama.cpp cannot load (docs/rules/engines.md "A real llama.cpp engine").
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPromSamples } from "../../src/engines/index.js";
import { type LlamaEngineProcess, startLlamaEngineProcess } from "../helpers/llama-engine-process.js";

let engine: LlamaEngineProcess;
const SLOT_CTX = 1024; // --ctx 2048 shared by 2 slots

beforeAll(async () => {
  engine = await startLlamaEngineProcess({ args: ["--parallel", "2", "--ctx", "2048", "--threads", "1"] });
});

afterAll(async () => {
  expect(await engine?.stop()).toBe(0);
});

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each under an assertion.
type Json = any;
async function post(route: string, body: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${engine.url}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
}
const get = async (route: string) => (await (await fetch(`${engine.url}${route}`)).json()) as Json;
const metric = async (name: string) => {
  const text = await (await fetch(`${engine.url}/metrics`)).text();
  return readPromSamples(text, (n) => n === name)[0]?.value ?? Number.NaN;
};

/** A /completion prompt of exactly `n` tokens: BOS then word tokens, as ids. */
const promptOf = (n: number) => [1, ...Array.from({ length: n - 1 }, (_, i) => 300 + (i % 50))];

describe("llama.cpp engine: routes and shapes", () => {
  it("answers /health, /props, /v1/models and /slots with the model's real figures", async () => {
    expect(await get("/health")).toEqual({ status: "ok" });
    const props = await get("/props");
    expect(props.default_generation_settings.n_ctx).toBe(SLOT_CTX);
    expect(props.total_slots).toBe(2);
    expect(props.model_path).toMatch(/tiny\.gguf$/);
    const models = await get("/v1/models");
    expect(models.data).toHaveLength(1);
    expect(models.data[0]).toMatchObject({ id: "tiny", object: "model", owned_by: "llamacpp" });
    expect(models.data[0].meta).toMatchObject({
      n_ctx_train: 2048,
      n_vocab: 512,
      n_embd: 64,
      n_ctx: SLOT_CTX,
    });
    expect(models.data[0].meta.size).toBeGreaterThan(100_000);
    const slots = await get("/slots");
    expect(slots.map((s: Json) => [s.id, s.n_ctx, s.is_processing])).toEqual([
      [0, SLOT_CTX, false],
      [1, SLOT_CTX, false],
    ]);
  });

  it("counts tokens exactly: /tokenize and /apply-template agree with what the routes evaluate", async () => {
    const content = "the quick brown fox jumps over the lazy dog";
    const tokens = (await post("/tokenize", { content, add_special: true })).json.tokens as number[];
    const done = await post("/completion", { prompt: content, n_predict: 2, temperature: 0 });
    expect(done.json.tokens_evaluated).toBe(tokens.length);
    expect((await post("/detokenize", { tokens: tokens.slice(1) })).json.content.trim()).toBe(content);
    const messages = [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Name three rivers." },
    ];
    const rendered = (await post("/apply-template", { messages })).json.prompt as string;
    expect(rendered).toContain("<|im_start|>user\nName three rivers.<|im_end|>");
    const counted = (await post("/tokenize", { content: rendered, add_special: true })).json.tokens.length;
    const chat = await post("/v1/chat/completions", { messages, max_tokens: 3, temperature: 0 });
    expect(chat.status).toBe(200);
    expect(chat.json.usage.prompt_tokens).toBe(counted);
    expect(chat.json.usage.completion_tokens).toBe(3);
    expect(chat.json.choices[0].finish_reason).toBe("length");
  });

  it("refuses a prompt that fills the slot's context (400 exceed_context_size_error) and serves one token less", async () => {
    const over = await post("/completion", { prompt: promptOf(SLOT_CTX), n_predict: 4 });
    expect(over.status).toBe(400);
    expect(over.json).toEqual({
      error: {
        code: 400,
        type: "exceed_context_size_error",
        message: `request (${SLOT_CTX} tokens) exceeds the available context size (${SLOT_CTX} tokens), try increasing it`,
        n_prompt_tokens: SLOT_CTX,
        n_ctx: SLOT_CTX,
      },
    });
    const fits = await post("/completion", { prompt: promptOf(SLOT_CTX - 1), n_predict: 4, temperature: 0 });
    expect(fits.status).toBe(200);
    // One token of room: the answer stops at the context, never by cutting the prompt.
    expect(fits.json).toMatchObject({
      tokens_evaluated: SLOT_CTX - 1,
      tokens_predicted: 1,
      stop_type: "limit",
    });
    expect(fits.json.truncated).toBe(true);
  });

  it("serves a repeated prefix from the slot's cache, and only the new tokens are evaluated", async () => {
    const openai = new OpenAI({ baseURL: `${engine.url}/v1`, apiKey: "none", maxRetries: 0 });
    const brief = "Plan a trip along the Loire, one stop a day, with a castle, a vineyard and a market. ";
    const turn1 = [{ role: "user" as const, content: brief.repeat(4) }];
    const first = (await openai.chat.completions.create({
      model: "tiny",
      messages: turn1,
      max_tokens: 8,
      temperature: 0,
    })) as Json;
    const turn2 = [
      ...turn1,
      { role: "assistant" as const, content: "Day one: Orléans." },
      { role: "user" as const, content: "And the second day?" },
    ];
    const second = (await openai.chat.completions.create({
      model: "tiny",
      messages: turn2,
      max_tokens: 8,
      temperature: 0,
    })) as Json;
    const cached = second.usage.prompt_tokens_details.cached_tokens;
    // Everything of turn 1's prompt up to the assistant's answer is reused.
    expect(cached).toBeGreaterThanOrEqual(first.usage.prompt_tokens - 4);
    expect(second.timings.prompt_n).toBe(second.usage.prompt_tokens - cached);
    expect(second.timings.prompt_n).toBeLessThan(second.usage.prompt_tokens / 2);
    // The same prompt again: all of it is cached but its last token, evaluated for its logits.
    const again = await post("/v1/chat/completions", { messages: turn2, max_tokens: 8, temperature: 0 });
    expect(again.json.timings).toMatchObject({ cache_n: second.usage.prompt_tokens - 1, prompt_n: 1 });
    expect(again.json.choices[0].message.content).toBe(second.choices[0].message.content);
    const fresh = await post("/v1/chat/completions", { messages: turn2, max_tokens: 2, cache_prompt: false });
    expect(fresh.json.usage.prompt_tokens_details.cached_tokens).toBe(0);
    expect(fresh.json.timings.prompt_n).toBe(second.usage.prompt_tokens);
    // The engine's own prefill time: one token evaluated against the whole prompt, a ratio of
    // about a hundred, so the order holds on a loaded machine too.
    expect(again.json.timings.prompt_ms).toBeLessThan(fresh.json.timings.prompt_ms);
  });

  it("decodes greedily to the same tokens every time", async () => {
    const ask = () =>
      post("/completion", {
        prompt: "once upon a time",
        n_predict: 16,
        temperature: 0,
        return_tokens: true,
        cache_prompt: false,
      });
    const [a, b] = [await ask(), await ask()];
    expect(a.json.tokens).toHaveLength(16);
    expect(b.json.tokens).toEqual(a.json.tokens);
    expect(b.json.content).toBe(a.json.content);
  });

  it("streams in llama-server's framing: OpenAI chat ends with usage and [DONE], /completion without [DONE]", async () => {
    const res = await fetch(`${engine.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 4,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const events = (await res.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice("data: ".length)) as Json);
    expect(chunks[0]!.choices[0].delta).toEqual({ role: "assistant", content: null });
    expect(chunks.at(-2)!.choices[0]).toMatchObject({ finish_reason: "length", delta: {} });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 4 } });
    const native = await fetch(`${engine.url}/completion`, {
      method: "POST",
      body: JSON.stringify({ prompt: "hi", n_predict: 3, stream: true }),
    });
    const lines = (await native.text()).split("\n\n").filter(Boolean);
    expect(lines.some((l) => l.includes("[DONE]"))).toBe(false);
    expect(JSON.parse(lines.at(-1)!.slice(6))).toMatchObject({
      stop: true,
      stop_type: "limit",
      tokens_predicted: 3,
    });
  });
});

describe("llama.cpp engine: slots", () => {
  it("runs two requests at once and defers a third until a slot frees", async () => {
    const before = await metric("llamacpp:tokens_predicted_total");
    const long = (seed: number) =>
      post("/completion", {
        prompt: `story number ${seed}`,
        n_predict: 400,
        temperature: 0,
        cache_prompt: false,
      });
    const seen = { processing: 0, deferred: 0 };
    let running = true;
    const watch = (async () => {
      while (running) {
        seen.processing = Math.max(seen.processing, await metric("llamacpp:requests_processing"));
        seen.deferred = Math.max(seen.deferred, await metric("llamacpp:requests_deferred"));
      }
    })();
    const answers = await Promise.all([long(1), long(2), long(3)]);
    running = false;
    await watch;
    expect(answers.map((a) => a.json.tokens_predicted)).toEqual([400, 400, 400]);
    expect(seen).toEqual({ processing: 2, deferred: 1 });
    expect(await metric("llamacpp:tokens_predicted_total")).toBe(before + 1200);
    expect(await metric("llamacpp:requests_processing")).toBe(0);
  });

  it("frees the slot of a client that leaves mid-stream", async () => {
    const controller = new AbortController();
    const res = await fetch(`${engine.url}/completion`, {
      method: "POST",
      body: JSON.stringify({ prompt: "a long tale", n_predict: 900, stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    let busy = 1;
    for (let i = 0; i < 100 && busy > 0; i++) {
      busy = await metric("llamacpp:requests_processing");
      if (busy > 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(busy).toBe(0);
    expect((await post("/completion", { prompt: "next", n_predict: 1 })).status).toBe(200);
  });
});

describe("llama.cpp engine: bad input", () => {
  it("answers each with llama.cpp's error shape, naming the field", async () => {
    const cases: [string, unknown, number, string, RegExp][] = [
      ["/completion", "not json", 400, "invalid_request_error", /body: invalid JSON/],
      ["/completion", { prompt: 42 }, 400, "invalid_request_error", /^prompt: /],
      [
        "/completion",
        { prompt: [1, 99999] },
        400,
        "invalid_request_error",
        /^prompt\[1\]: must be a token id/,
      ],
      [
        "/completion",
        { prompt: "x", id_slot: 7 },
        400,
        "invalid_request_error",
        /^id_slot: there is no slot 7/,
      ],
      ["/v1/chat/completions", { messages: "hi" }, 400, "invalid_request_error", /^messages: /],
      [
        "/v1/chat/completions",
        { messages: [{ role: "user", content: "x" }], n: 2 },
        400,
        "invalid_request_error",
        /^n: /,
      ],
      [
        "/v1/chat/completions",
        { messages: [{ role: "user", content: "x" }], top_k: -1 },
        400,
        "invalid_request_error",
        /^top_k: /,
      ],
      // As llama-server answers tools when it runs without --jinja.
      [
        "/v1/chat/completions",
        {
          messages: [{ role: "user", content: "x" }],
          tools: [{ type: "function", function: { name: "f" } }],
        },
        500,
        "server_error",
        /^tools param requires --jinja flag$/,
      ],
      ["/tokenize", { content: 5 }, 400, "invalid_request_error", /^content: /],
    ];
    for (const [route, body, status, type, message] of cases) {
      const a = await post(route, body);
      expect([route, a.status, a.json.error?.type]).toEqual([route, status, type]);
      expect(a.json.error.message).toMatch(message);
    }
    const missing = await fetch(`${engine.url}/api/tags`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: { code: 404, message: "File Not Found", type: "not_found_error" },
    });
    const huge = await post("/completion", { prompt: "x".repeat(9 * 1024 * 1024) });
    expect([huge.status, huge.json.error.message]).toEqual([
      400,
      "body: request body too large: the limit is 8388608 bytes",
    ]);
    expect(await get("/health")).toEqual({ status: "ok" });
  });

  it("a model llama.cpp cannot load fails the start with the file named, in the engine's process only", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kubemoot-bad-model-"));
    try {
      writeFileSync(
        path.join(dir, "broken.gguf"),
        Buffer.concat([Buffer.from("GGUF\x03\0\0\0"), Buffer.alloc(64, 0xff)]),
      );
      const failed = startLlamaEngineProcess({ modelsDir: dir });
      await expect(failed).rejects.toThrow(
        /exited with 2 before listening:[\s\S]*cannot load .*broken\.gguf/,
      );
      await expect(startLlamaEngineProcess({ modelsDir: path.join(dir, "none") })).rejects.toThrow(
        /--models: cannot read/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
