// Embedding models on the emulator, over HTTP with the official clients: the ollama npm client
// for /api/embed and /api/embeddings, the openai npm client for /v1/embeddings.
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { postJson } from "../helpers/emulator-http.js";

let emu: EmulatorHandle;
let ollama: Ollama;
let openai: OpenAI;

beforeAll(async () => {
  emu = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    numParallel: 4,
    models: { "qwen3:8b": 4863, "nomic-embed-text": 262, "mxbai-embed-large": 639, "all-minilm": 44 },
    timeScale: 0.001,
  });
  ollama = new Ollama({ host: emu.url });
  openai = new OpenAI({ baseURL: `${emu.url}/v1`, apiKey: "unused", maxRetries: 0 });
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(() => {
  emu.reset();
});

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * (b[i] as number), 0);

describe("/api/embed (ollama client)", () => {
  it.each([
    ["nomic-embed-text", 768],
    ["mxbai-embed-large", 1024],
    ["all-minilm", 384],
  ])("%s gives unit vectors of %i dimensions", async (model, dims) => {
    const r = await ollama.embed({ model, input: "why is the sky blue?" });
    expect(r.model).toBe(model);
    expect(r.embeddings).toHaveLength(1);
    const v = r.embeddings[0] as number[];
    expect(v).toHaveLength(dims);
    expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-5);
    expect(r.prompt_eval_count).toBe(6); // 20 code points / 3.5
    expect(r.total_duration).toBeGreaterThan(0);
    expect(r.load_duration).toBeGreaterThan(0); // the first call loaded the model
  });

  it("is deterministic, one vector per batch input, batch equal to single calls", async () => {
    const inputs = ["alpha beta", "gamma delta", "alpha beta"];
    const batch = await ollama.embed({ model: "nomic-embed-text", input: inputs });
    expect(batch.embeddings).toHaveLength(3);
    expect(batch.embeddings[0]).toEqual(batch.embeddings[2]);
    expect(batch.embeddings[0]).not.toEqual(batch.embeddings[1]);
    const single = await ollama.embed({ model: "nomic-embed-text", input: "gamma delta" });
    expect(single.embeddings[0]).toEqual(batch.embeddings[1]);
    expect(batch.prompt_eval_count).toBe(3 + 4 + 3);
    // Another model gives another vector for the same text.
    const other = await ollama.embed({ model: "all-minilm", input: "alpha beta" });
    expect(other.embeddings[0]?.slice(0, 5)).not.toEqual(batch.embeddings[0]?.slice(0, 5));
  });

  it("texts sharing words are closer than texts sharing none", async () => {
    const r = await ollama.embed({
      model: "nomic-embed-text",
      input: ["the weather in Paris today", "weather forecast for Paris", "GPU memory and tokens"],
    });
    const [a, b, c] = r.embeddings as [number[], number[], number[]];
    expect(cosine(a, b)).toBeGreaterThan(cosine(a, c) + 0.2);
  });

  it("loads the model on the GPU with one slot and lists it in /api/ps", async () => {
    await ollama.embed({ model: "nomic-embed-text", input: "x" });
    const ps = await ollama.ps();
    expect(ps.models.map((m) => m.name)).toEqual(["nomic-embed-text:latest"]);
    // context_length is in Ollama's /api/ps but not in the client's types.
    expect((ps.models[0] as unknown as { context_length: number }).context_length).toBe(2048); // the default 32768, clamped to the model's
    const state = emu.gpu();
    expect(state.runners[0]?.footprintMiB).toBe(
      262 + Math.ceil(2048 * 1 * (state.runners[0]?.spec.kvMiBPerToken ?? 0)),
    );
  });

  it("empty input loads the model and answers no vectors", async () => {
    const r = await ollama.embed({ model: "all-minilm", input: [] });
    expect(r.embeddings).toEqual([]);
    expect((await ollama.ps()).models).toHaveLength(1);
  });

  it("truncates to the context by default; truncate:false over the context is a 400", async () => {
    const long = "word ".repeat(2000); // 10000 code points ≈ 2858 tokens > 512
    const r = await ollama.embed({ model: "all-minilm", input: long });
    expect(r.prompt_eval_count).toBe(512);
    // The truncated text's vector is the vector of its first 512 tokens.
    const head = await ollama.embed({ model: "all-minilm", input: long.slice(0, 1792) });
    expect(head.embeddings[0]).toEqual(r.embeddings[0]);
    await expect(ollama.embed({ model: "all-minilm", input: long, truncate: false })).rejects.toMatchObject({
      status_code: 400,
      error: "the input length exceeds the context length",
    });
  });

  it("dimensions shortens and renormalises", async () => {
    const r = await ollama.embed({ model: "nomic-embed-text", input: "hello", dimensions: 256 });
    const v = r.embeddings[0] as number[];
    expect(v).toHaveLength(256);
    expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-5);
  });

  it("a chat model cannot embed; an embedding model cannot chat or generate", async () => {
    await expect(ollama.embed({ model: "qwen3:8b", input: "x" })).rejects.toMatchObject({
      status_code: 501,
      error: "this model does not support embeddings",
    });
    await expect(
      ollama.chat({ model: "nomic-embed-text", messages: [{ role: "user", content: "hi" }] }),
    ).rejects.toMatchObject({ status_code: 400, error: '"nomic-embed-text" does not support chat' });
    await expect(ollama.generate({ model: "all-minilm", prompt: "hi" })).rejects.toMatchObject({
      status_code: 400,
      error: '"all-minilm" does not support generate',
    });
    const show = await ollama.show({ model: "nomic-embed-text" });
    expect(show.capabilities).toEqual(["embedding"]);
    // model_info is a JSON object on the wire (the client's types say Map).
    expect((show.model_info as unknown as Record<string, unknown>)["nomic-bert.embedding_length"]).toBe(768);
    expect(show.details.family).toBe("nomic-bert");
  });

  it("bad input is a 400 with a JSON error", async () => {
    const bad = await postJson(`${emu.url}/api/embed`, { model: "all-minilm", input: [1, 2] });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toEqual({ error: "invalid input type" });
    const missing = await postJson(`${emu.url}/api/embed`, { model: "nope", input: "x" });
    expect(missing.status).toBe(404);
  });
});

describe("/api/embeddings (legacy)", () => {
  it("prompt → embedding, the same unit vector as /api/embed", async () => {
    const legacy = await ollama.embeddings({ model: "nomic-embed-text", prompt: "hello world" });
    const now = await ollama.embed({ model: "nomic-embed-text", input: "hello world" });
    expect(legacy.embedding).toEqual(now.embeddings[0]);
  });
});

describe("/v1/embeddings (openai client)", () => {
  it("decodes the default base64 encoding into the same vectors as /api/embed", async () => {
    const r = await openai.embeddings.create({ model: "nomic-embed-text", input: ["hello world", "bye"] });
    expect(r.object).toBe("list");
    expect(r.data.map((d) => d.index)).toEqual([0, 1]);
    expect(r.usage).toEqual({ prompt_tokens: 4 + 1, total_tokens: 5 });
    const direct = await ollama.embed({ model: "nomic-embed-text", input: ["hello world", "bye"] });
    for (const [i, d] of r.data.entries()) {
      expect(d.embedding).toHaveLength(768);
      const want = direct.embeddings[i] as number[];
      d.embedding.forEach((x, j) => {
        expect(Math.abs(x - (want[j] as number))).toBeLessThan(1e-6); // float32 on the wire
      });
    }
  });

  it("encoding_format float, and errors in OpenAI's shape", async () => {
    const r = await openai.embeddings.create({ model: "all-minilm", input: "hi", encoding_format: "float" });
    expect(r.data[0]?.embedding).toHaveLength(384);
    const err = await openai.embeddings.create({ model: "qwen3:8b", input: "hi" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(501);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain("does not support embeddings");
    const empty = await openai.embeddings.create({ model: "all-minilm", input: [] }).catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError);
  });
});
