// The official Node clients agents use — ollama, openai and LangChain's @langchain/ollama —
// pointed at a live sidecar process's proxy (the built CLI, a real child process), which places
// every call on an emulated GPU over HTTP. Each client is used as its own docs show, unchanged
// but for its base URL.
import { ChatOllama, OllamaEmbeddings } from "@langchain/ollama";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { memorySidecarArgs, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

let emulator: EmulatorHandle;
let sidecar: SidecarProcess;
let base = "";

beforeAll(async () => {
  emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    models: { "qwen3:8b": 4900, "nomic-embed-text": 262 },
    contextLength: 8192,
    timeScale: 0.01,
  });
  sidecar = await startSidecarProcess(
    memorySidecarArgs(
      "--provider",
      `gpu=${emulator.url},vram=24563,context=8192`,
      "--probe-interval-ms",
      "250",
    ),
    { KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:8b","score":50}]' },
  );
  base = `http://${sidecar.proxyAddress}`;
});

afterAll(async () => {
  expect(await sidecar?.stop()).toBe(0);
  await emulator?.close();
});

/** No ticket left active on the sidecar (every call released). */
async function released(): Promise<void> {
  const metrics = await (await fetch(`${sidecar.apiUrl}/metrics`)).text();
  expect(metrics).toMatch(/^kubemoot_tickets_active 0$/m);
}

const user = (content: string) => [{ role: "user" as const, content }];

describe("ollama (npm)", () => {
  const ollama = () => new Ollama({ host: base });

  it("chat, whole and streamed", async () => {
    const whole = await ollama().chat({
      model: "qwen3:8b",
      messages: user("hello"),
      options: { num_predict: 5 },
    });
    expect(whole.message.role).toBe("assistant");
    expect(whole.eval_count).toBe(5);
    let text = "";
    let last: { done: boolean; prompt_eval_count: number } | undefined;
    for await (const part of await ollama().chat({
      model: "qwen3:8b",
      messages: user("again"),
      stream: true,
    })) {
      text += part.message.content;
      last = part;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(last?.done).toBe(true);
    expect(last?.prompt_eval_count).toBeGreaterThan(0);
    await released();
  });

  it("generate", async () => {
    const g = await ollama().generate({
      model: "qwen3:8b",
      prompt: "Write a haiku.",
      options: { num_predict: 4 },
    });
    expect(g.done).toBe(true);
    expect(g.eval_count).toBe(4);
    await released();
  });

  it("embed, batch and single", async () => {
    const e = await ollama().embed({ model: "nomic-embed-text", input: ["alpha", "beta gamma"] });
    expect(e.embeddings).toHaveLength(2);
    expect(e.embeddings[1]).toHaveLength(768);
    const one = await ollama().embed({ model: "nomic-embed-text", input: "alpha" });
    expect(one.embeddings[0]).toEqual(e.embeddings[0]);
    await released();
  });

  it("list, show and ps", async () => {
    const list = await ollama().list();
    expect(list.models.map((m) => m.name).sort()).toEqual(["nomic-embed-text:latest", "qwen3:8b"]);
    const show = await ollama().show({ model: "qwen3:8b" });
    expect(show.details.family).toBe("qwen3");
    // The earlier tests loaded both models on the one GPU; /api/ps shows them once a probe
    // published them.
    const loaded = async () =>
      (await ollama().ps()).models
        .map((m) => m.name)
        .sort()
        .join(",");
    await waitUntil(async () => (await loaded()) === "nomic-embed-text:latest,qwen3:8b", 10_000, "ps");
  });

  it("model management raises the operator's 403", async () => {
    await expect(ollama().pull({ model: "qwen3:8b" })).rejects.toMatchObject({
      status_code: 403,
      error: expect.stringMatching(/managed by the Kubemoot operator.*docs\/deploy\.md/),
    });
    await expect(ollama().delete({ model: "qwen3:8b" })).rejects.toMatchObject({ status_code: 403 });
  });
});

describe("openai (npm)", () => {
  const openai = () => new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0 });

  it("chat, whole and streamed with include_usage", async () => {
    const whole = await openai().chat.completions.create({
      model: "qwen3:8b",
      messages: user("hi"),
      max_tokens: 5,
    });
    expect(whole.choices[0]?.message.role).toBe("assistant");
    expect(whole.usage?.completion_tokens).toBe(5);
    const stream = await openai().chat.completions.create({
      model: "qwen3:8b",
      messages: user("hi again"),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
    await released();
  });

  it("embeddings (base64, the client's default, decoded)", async () => {
    const e = await openai().embeddings.create({ model: "nomic-embed-text", input: ["alpha", "beta"] });
    expect(e.data).toHaveLength(2);
    expect(e.data[0]?.embedding).toHaveLength(768);
    expect(e.usage.prompt_tokens).toBeGreaterThan(0);
    await released();
  });

  it("models list and retrieve", async () => {
    const ids: string[] = [];
    for await (const m of openai().models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual(["nomic-embed-text:latest", "qwen3:8b"]);
    expect((await openai().models.retrieve("qwen3:8b")).id).toBe("qwen3:8b");
  });

  it("typed errors: NotFoundError, BadRequestError with code and type", async () => {
    const missing = await openai()
      .models.retrieve("nope:1b")
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ code: "model_not_found", type: "invalid_request_error" });
    const unknown = await openai()
      .chat.completions.create({ model: "nope:1b", messages: user("x") })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown).toMatchObject({ code: "model_not_found" });
    const tooLong = await openai()
      .chat.completions.create({ model: "qwen3:8b", messages: user("word ".repeat(60_000)) })
      .catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(OpenAI.BadRequestError);
    expect(tooLong).toMatchObject({ code: "context_length_exceeded", type: "invalid_request_error" });
    await released();
  });
});

describe("@langchain/ollama", () => {
  const chat = () => new ChatOllama({ baseUrl: base, model: "qwen3:8b", numPredict: 6 });

  it("invoke and stream", async () => {
    const msg = await chat().invoke("Say something short.");
    expect(typeof msg.content).toBe("string");
    expect((msg.content as string).length).toBeGreaterThan(0);
    expect(msg.usage_metadata?.output_tokens).toBe(6);
    let text = "";
    for await (const chunk of await chat().stream("And again.")) text += chunk.content as string;
    expect(text.length).toBeGreaterThan(0);
    await released();
  });

  it("embeddings", async () => {
    const emb = new OllamaEmbeddings({ baseUrl: base, model: "nomic-embed-text" });
    const docs = await emb.embedDocuments(["alpha", "beta gamma"]);
    expect(docs).toHaveLength(2);
    expect(docs[0]).toHaveLength(768);
    expect(await emb.embedQuery("alpha")).toEqual(docs[0]);
    await released();
  });
});

// Agent features the proxy passes through untouched: tools, thinking and structured output
// (`format`, a JSON schema) — the emulator produces them deterministically.
describe("agent features through the proxy", () => {
  it("ollama: tools", async () => {
    const res = await new Ollama({ host: base }).chat({
      model: "qwen3:8b",
      messages: user("What is the weather in Paris? Use the get_weather tool."),
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "the weather in a city",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
        },
      ],
      stream: false,
    });
    expect(res.message.tool_calls?.[0]?.function.name).toBe("get_weather");
    await released();
  });

  it("ollama: thinking", async () => {
    const res = await new Ollama({ host: base }).chat({
      model: "qwen3:8b",
      messages: user("Think first, then answer."),
      think: true,
      stream: false,
    });
    expect(res.message.thinking?.length ?? 0).toBeGreaterThan(0);
    await released();
  });

  it("ollama: format (JSON schema)", async () => {
    const res = await new Ollama({ host: base }).chat({
      model: "qwen3:8b",
      messages: user("Describe a city."),
      format: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      stream: false,
    });
    expect(typeof (JSON.parse(res.message.content) as { city: unknown }).city).toBe("string");
    await released();
  });

  it("@langchain/ollama: withStructuredOutput (a JSON schema)", async () => {
    const person = {
      title: "Person",
      type: "object",
      properties: { name: { type: "string" }, age: { type: "integer" } },
      required: ["name", "age"],
    };
    const structured = new ChatOllama({ baseUrl: base, model: "qwen3:8b" }).withStructuredOutput(person);
    const out = (await structured.invoke("Ada is 36.")) as { name: unknown; age: unknown };
    expect(typeof out.name).toBe("string");
    expect(Number.isInteger(out.age)).toBe(true);
    await released();
  });
});

describe("legacy completions", () => {
  it("openai: legacy completions, whole and streamed", async () => {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0 });
    const whole = await client.completions.create({ model: "qwen3:8b", prompt: "Once upon", max_tokens: 4 });
    expect(whole.choices[0]?.text.length).toBeGreaterThan(0);
    expect(whole.usage?.prompt_tokens).toBeGreaterThan(0);
    let text = "";
    for await (const c of await client.completions.create({
      model: "qwen3:8b",
      prompt: "Again",
      stream: true,
    }))
      text += c.choices[0]?.text ?? "";
    expect(text.length).toBeGreaterThan(0);
    await released();
  });
});
