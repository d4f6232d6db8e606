// The emulator's wire shapes over real HTTP: native and OpenAI APIs, framing, validation.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseNdjson, parseSse, postJson, waitFor } from "../../test/helpers/emulator-http.js";
import { type EmulatorHandle, startEmulator } from "./index.js";

const MiB = 1024 * 1024;
let emu: EmulatorHandle;
let url: string;

beforeAll(async () => {
  emu = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    models: { "qwen3:8b": 4863, "qwen3:14b": 9000 },
    timeScale: 0.001,
    outputTokens: 8,
    dcgm: true,
  });
  url = emu.url;
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.reset();
});

async function getJson(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

type PsEntry = {
  name: string;
  model: string;
  size: number;
  size_vram: number;
  digest: string;
  details: Record<string, unknown>;
  expires_at: string;
  context_length: number;
};
const ps = async () => (await getJson("/api/ps")).models as PsEntry[];

describe("read-only endpoints", () => {
  it("GET / and /api/version", async () => {
    const root = await fetch(`${url}/`);
    expect(await root.text()).toBe("Ollama is running");
    expect(await getJson("/api/version")).toEqual({ version: "0.13.0" });
  });

  it("GET /api/tags lists the catalog with on-disk sizes in bytes", async () => {
    const tags = (await getJson("/api/tags")).models as Array<Record<string, unknown>>;
    expect(tags.map((t) => t.name)).toEqual(["qwen3:8b", "qwen3:14b"]);
    const t = tags[0] as Record<string, unknown>;
    expect(Object.keys(t).sort()).toEqual(["details", "digest", "model", "modified_at", "name", "size"]);
    expect(t.size).toBe(4863 * MiB);
    expect(t.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(t.modified_at as string))).toBe(false);
    expect(t.details).toEqual({
      parent_model: "",
      format: "gguf",
      family: "qwen3",
      families: ["qwen3"],
      parameter_size: "8.0B",
      quantization_level: "Q4_K_M",
    });
  });

  it("POST /api/show, and 404 for an unknown model", async () => {
    const show = await postJson(`${url}/api/show`, { model: "qwen3:8b" });
    expect(show.status).toBe(200);
    const body = JSON.parse(show.text);
    expect(body.details.family).toBe("qwen3");
    expect(body.model_info["qwen3.context_length"]).toBe(40_960);
    const missing = await postJson(`${url}/api/show`, { model: "nope:1b" });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toEqual({ error: 'model "nope:1b" not found, try pulling it first' });
  });

  it("GET /v1/models", async () => {
    const body = await getJson("/v1/models");
    expect(body.object).toBe("list");
    expect((body.data as Array<{ id: string; object: string; owned_by: string }>).map((m) => m.id)).toEqual([
      "qwen3:8b",
      "qwen3:14b",
    ]);
  });

  it("unknown routes are 404", async () => {
    const res = await fetch(`${url}/api/nothing`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("404 page not found");
    expect((await fetch(`${url}/api/chat`)).status).toBe(404); // GET on a POST route
  });
});

describe("load and unload", () => {
  it("POST /api/generate {model} loads: done_reason load, and /api/ps shows it with every field", async () => {
    const res = await postJson(`${url}/api/generate`, { model: "qwen3:8b" });
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    const body = JSON.parse(res.text);
    expect(body).toMatchObject({ model: "qwen3:8b", response: "", done: true, done_reason: "load" });
    const models = await ps();
    expect(models).toHaveLength(1);
    const m = models[0] as PsEntry;
    expect(Object.keys(m).sort()).toEqual(
      ["context_length", "details", "digest", "expires_at", "model", "name", "size", "size_vram"].sort(),
    );
    // 24563 MiB → Ollama's default context 32768; KV 32768 × 1 × 0.125 MiB = 4096 MiB.
    expect(m.context_length).toBe(32_768);
    expect(m.size).toBe((4863 + 4096) * MiB);
    expect(m.size_vram).toBe(m.size);
    expect(m.name).toBe("qwen3:8b");
    const left = Date.parse(m.expires_at) - Date.now();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(300_000 * 0.001 + 50); // 5 minutes, scaled
  });

  it("POST /api/generate {model, keep_alive: 0} unloads: done_reason unload", async () => {
    await postJson(`${url}/api/generate`, { model: "qwen3:8b", keep_alive: "1h" });
    expect((await ps()).map((m) => m.name)).toEqual(["qwen3:8b"]);
    const res = await postJson(`${url}/api/generate`, { model: "qwen3:8b", keep_alive: 0 });
    expect(JSON.parse(res.text)).toMatchObject({ model: "qwen3:8b", done: true, done_reason: "unload" });
    await waitFor(async () => (await ps()).length === 0, 2000);
    await waitFor(() => emu.gpu().usedMiB === 0, 2000);
  });

  it("/api/chat with no messages loads, and with keep_alive 0 unloads", async () => {
    const load = JSON.parse((await postJson(`${url}/api/chat`, { model: "qwen3:14b", messages: [] })).text);
    expect(load).toMatchObject({
      message: { role: "assistant", content: "" },
      done: true,
      done_reason: "load",
    });
    const unload = JSON.parse(
      (await postJson(`${url}/api/chat`, { model: "qwen3:14b", keep_alive: "0s" })).text,
    );
    expect(unload.done_reason).toBe("unload");
  });

  it("404 for unknown models on every inference route", async () => {
    for (const path of ["/api/chat", "/api/generate"]) {
      const res = await postJson(`${url}${path}`, { model: "ghost:7b", prompt: "hi", messages: [] });
      expect(res.status).toBe(404);
      expect(JSON.parse(res.text)).toEqual({ error: 'model "ghost:7b" not found, try pulling it first' });
    }
    const oa = await postJson(`${url}/v1/chat/completions`, {
      model: "ghost:7b",
      messages: [{ role: "user", content: "x" }],
    });
    expect(oa.status).toBe(404);
    expect(JSON.parse(oa.text)).toEqual({
      error: {
        message: 'model "ghost:7b" not found, try pulling it first',
        type: "not_found_error",
        param: null,
        code: null,
      },
    });
  });
});

describe("answers and framing", () => {
  const chat = { model: "qwen3:8b", messages: [{ role: "user", content: "x".repeat(35) }] };

  it("streams /api/chat as NDJSON ending in a final chunk with honest counts", async () => {
    const res = await postJson(`${url}/api/chat`, chat);
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/x-ndjson");
    const lines = parseNdjson(res.text);
    expect(lines).toHaveLength(8 + 1);
    for (const l of lines.slice(0, -1)) {
      expect(l).toMatchObject({ model: "qwen3:8b", done: false, message: { role: "assistant" } });
      expect(typeof l.created_at).toBe("string");
    }
    const last = lines.at(-1) as Record<string, number | string | boolean>;
    expect(last).toMatchObject({
      done: true,
      done_reason: "stop",
      message: { role: "assistant", content: "" },
    });
    // 35 chars = 10 tokens + 4 of template + 3 of answer header.
    expect(last.prompt_eval_count).toBe(17);
    expect(last.eval_count).toBe(8);
    // A cold load: load_duration ≈ 4863 MiB at 1024 MiB/s, in emulated ns.
    expect(last.load_duration as number).toBeGreaterThanOrEqual(4.7e9);
    // 8 tokens at 50 tokens/s = 160 ms of eval; 17 tokens at 2000/s = 8.5 ms of prompt.
    expect(last.eval_duration).toBe(160_000_000);
    expect(last.prompt_eval_duration).toBe(8_500_000);
    for (const k of ["total_duration", "load_duration", "prompt_eval_duration", "eval_duration"]) {
      expect(Number.isInteger(last[k])).toBe(true);
    }
    expect(last.total_duration as number).toBeGreaterThanOrEqual(
      (last.load_duration as number) + (last.prompt_eval_duration as number) + (last.eval_duration as number),
    );

    // The same request without streaming: one JSON object whose content is the concatenation.
    const whole = await postJson(`${url}/api/chat`, { ...chat, stream: false });
    expect(whole.type).toMatch(/^application\/json/);
    const body = JSON.parse(whole.text);
    const streamed = lines.map((l) => (l.message as { content: string }).content).join("");
    expect(body.message.content).toBe(streamed);
    expect(body).toMatchObject({ done: true, done_reason: "stop", eval_count: 8, prompt_eval_count: 17 });
    expect(body.load_duration ?? 0).toBeLessThan(1e9); // warm this time
  });

  it("streams /api/generate with `response`, and num_predict cuts with done_reason length", async () => {
    const res = await postJson(`${url}/api/generate`, {
      model: "qwen3:8b",
      prompt: "hello",
      options: { num_predict: 3 },
    });
    const lines = parseNdjson(res.text);
    expect(lines).toHaveLength(4);
    expect(typeof lines[0]?.response).toBe("string");
    expect(lines.at(-1)).toMatchObject({ done: true, done_reason: "length", eval_count: 3 });
  });

  it("streams /v1/chat/completions as SSE ending in [DONE], with usage on request", async () => {
    const res = await postJson(`${url}/v1/chat/completions`, {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "x".repeat(35) }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 5,
    });
    expect(res.status).toBe(200);
    expect(res.type).toBe("text/event-stream");
    expect(res.text.endsWith("data: [DONE]\n\n")).toBe(true);
    const events = parseSse(res.text);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1) as Array<Record<string, unknown>>;
    const content = chunks.slice(0, 5);
    for (const c of content) {
      expect(c).toMatchObject({ object: "chat.completion.chunk", model: "qwen3:8b" });
      expect((c.choices as Array<{ finish_reason: unknown }>)[0]?.finish_reason).toBeNull();
    }
    expect(chunks[5]).toMatchObject({ choices: [{ finish_reason: "length", delta: { content: "" } }] });
    expect(chunks[6]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 17, completion_tokens: 5, total_tokens: 22 },
    });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it("answers /v1/chat/completions without streaming as one chat.completion", async () => {
    const res = await postJson(`${url}/v1/chat/completions`, {
      model: "qwen3:8b",
      messages: [{ role: "user", content: [{ type: "text", text: "x".repeat(35) }] }],
    });
    const body = JSON.parse(res.text);
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "qwen3:8b",
      choices: [{ index: 0, message: { role: "assistant" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 17, completion_tokens: 8, total_tokens: 25 },
    });
    expect(body.id).toMatch(/^chatcmpl-/);
  });

  it("truncates over-long chats silently: 200, oldest non-system messages dropped", async () => {
    const messages = [
      { role: "system", content: "s".repeat(35) },
      ...Array.from({ length: 10 }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        content: "m".repeat(35),
      })),
    ];
    const res = await postJson(`${url}/api/chat`, {
      model: "qwen3:8b",
      messages,
      stream: false,
      options: { num_ctx: 64 },
    });
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text);
    // All of it is 11 × 14 + 3 = 157 tokens; the system prompt and the 3 newest fit 64: 59.
    expect(body.prompt_eval_count).toBe(59);
    expect((await ps())[0]?.context_length).toBe(64);
  });

  it("cuts an over-long /api/generate prompt in the middle: exactly num_ctx evaluated", async () => {
    const res = await postJson(`${url}/api/generate`, {
      model: "qwen3:8b",
      prompt: "p".repeat(3500),
      stream: false,
      options: { num_ctx: 128 },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).prompt_eval_count).toBe(128);
    const raw = await postJson(`${url}/api/generate`, {
      model: "qwen3:8b",
      prompt: "p".repeat(35),
      raw: true,
      stream: false,
      options: { num_ctx: 128 },
    });
    expect(JSON.parse(raw.text).prompt_eval_count).toBe(10);
  });

  it("truncate: false refuses an over-long prompt with 400", async () => {
    const res = await postJson(`${url}/api/generate`, {
      model: "qwen3:8b",
      prompt: "p".repeat(3500),
      truncate: false,
      options: { num_ctx: 128 },
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatch(/exceeds the context length/);
  });
});

describe("bad requests get 400 JSON and never kill the emulator", () => {
  const cases: Array<[string, string, unknown, RegExp]> = [
    ["broken JSON", "/api/chat", '{"model": "qwen3:8b", "messages": [', /invalid JSON/],
    ["empty body", "/api/chat", "", /missing request body/],
    ["array body", "/api/generate", "[1,2]", /cannot unmarshal array/],
    ["no model", "/api/chat", { messages: [] }, /model is required/],
    [
      "stream not a bool",
      "/api/chat",
      { model: "qwen3:8b", stream: "yes" },
      /ChatRequest\.stream of type bool/,
    ],
    ["messages not a list", "/api/chat", { model: "qwen3:8b", messages: "hi" }, /messages/],
    [
      "content not a string",
      "/api/chat",
      { model: "qwen3:8b", messages: [{ role: "user", content: 5 }] },
      /content of type string/,
    ],
    [
      "num_ctx not an integer",
      "/api/generate",
      { model: "qwen3:8b", prompt: "x", options: { num_ctx: "big" } },
      /num_ctx/,
    ],
    ["bare numeric keep_alive", "/api/generate", { model: "qwen3:8b", keep_alive: "3600" }, /missing unit/],
    [
      "keep_alive of a wrong type",
      "/api/generate",
      { model: "qwen3:8b", keep_alive: true },
      /Unsupported type/,
    ],
    ["prompt not a string", "/api/generate", { model: "qwen3:8b", prompt: 42 }, /prompt of type string/],
    ["model not a string", "/api/show", { model: 7 }, /model of type string/],
  ];

  it.each(cases)("%s", async (_name, path, body, message) => {
    const res = await postJson(`${url}${path}`, body);
    expect(res.status).toBe(400);
    expect(res.type).toMatch(/^application\/json/);
    expect(JSON.parse(res.text).error).toMatch(message);
    expect((await fetch(`${url}/api/version`)).status).toBe(200);
  });

  it("OpenAI requests get OpenAI-shaped 400s", async () => {
    const res = await postJson(`${url}/v1/chat/completions`, { model: "qwen3:8b", messages: [] });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatchObject({ type: "invalid_request_error" });
  });

  it("a body over the 8 MiB cap is refused, and the emulator still answers", async () => {
    const huge = JSON.stringify({ model: "qwen3:8b", prompt: "x".repeat(9 * MiB) });
    const res = await postJson(`${url}/api/generate`, huge);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatch(/too large/);
    const after = await postJson(`${url}/api/generate`, {
      model: "qwen3:8b",
      prompt: "still there?",
      stream: false,
    });
    expect(after.status).toBe(200);
  });

  it("survives a raw malformed HTTP request", async () => {
    const net = await import("node:net");
    const reply = await new Promise<string>((resolve, reject) => {
      const s = net.connect(emu.port, "127.0.0.1", () => s.write("BLAH / HTTP/9.9\r\n\r\n"));
      let data = "";
      s.on("data", (d) => {
        data += d.toString();
      });
      s.on("end", () => resolve(data));
      s.on("close", () => resolve(data));
      s.on("error", reject);
    });
    expect(reply).toMatch(/400/);
    expect((await fetch(`${url}/api/version`)).status).toBe(200);
  });
});

describe("admin and DCGM", () => {
  it("GET /_emulator/state shows the GPU; /metrics serves framebuffer totals", async () => {
    await postJson(`${url}/api/generate`, { model: "qwen3:8b" });
    const state = await getJson("/_emulator/state");
    expect(state).toMatchObject({
      vramMiB: 24_563,
      usedMiB: 8959,
      freeMiB: 24_563 - 8959,
      contextLength: 32_768,
    });
    expect(state.models).toEqual([
      expect.objectContaining({
        name: "qwen3:8b",
        state: "ready",
        footprintMiB: 8959,
        weightsMiB: 4863,
        kvMiB: 4096,
      }),
    ]);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^DCGM_FI_DEV_FB_TOTAL\{[^}]*\} 24563$/m);
    expect(metrics).toMatch(/^DCGM_FI_DEV_FB_USED\{[^}]*\} 8959$/m);
    expect(metrics).toMatch(/^DCGM_FI_DEV_FB_FREE\{[^}]*\} 15604$/m);
  });

  it("POST /_emulator/reset drops every model", async () => {
    await postJson(`${url}/api/generate`, { model: "qwen3:8b" });
    const res = await postJson(`${url}/_emulator/reset`, {});
    expect(res.status).toBe(200);
    expect(await ps()).toEqual([]);
  });
});
