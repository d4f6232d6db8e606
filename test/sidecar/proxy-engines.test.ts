// Issue 20, the proxy across engines: a sidecar process on a real nats-server, whose provider
// states (written straight into the shared state, as the operator's probes would) say an
// OpenAI-only engine serves the model. The official Ollama client calls /api/chat, /api/generate
// and /api/embed through the proxy; the proxy translates them to the engine's OpenAI routes and
// the answers back, streaming included, and names what had no equivalent in X-Kubemoot-Dropped.
// The engines are the emulator's vLLM personality over HTTP (which has no Ollama routes); the
// one that dies mid-stream is a separate process, killed with SIGKILL.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderState } from "../../src/core/index.js";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { schedulerClient } from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { allTicketsReleased, ollamaWithHeaders } from "../helpers/ollama-proxy-client.js";
import { repoRoot, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { providerState } from "../helpers/state-fixtures.js";
import { waitUntil } from "../helpers/wait-until.js";

let nats: NatsServer;
let store: StateStore;
let engine: EmulatorHandle;
let embedder: EmulatorHandle;
let sidecar: SidecarProcess;
let base = "";

// Probed "in the future": the states never go stale while the tests run (src/core eligibility).
const probed = () => new Date(Date.now() + 10 * 60_000).toISOString();

function engineState(name: string, url: string, over: Partial<ProviderState> = {}): ProviderState {
  return providerState(name, {
    endpoint: url,
    engine: "vllm",
    maxParallel: 8,
    contextLength: 8192,
    loadedModels: ["qwen3:8b"],
    loadedModelFootprintsMiB: { "qwen3:8b": 4900 },
    loadedModelContextLengths: { "qwen3:8b": 8192 },
    availableModelFootprintsMiB: {},
    lastProbedAt: probed(),
    ...over,
  });
}

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  const vllm = (model: string, contextLength: number) =>
    startEmulator({
      listen: "127.0.0.1:0",
      engine: "vllm",
      vramMiB: 24_563,
      models: { [model]: 4900 },
      contextLength,
      timeScale: 0.01,
    });
  engine = await vllm("qwen3:8b", 8192);
  embedder = await vllm("nomic-embed-text", 2048);
  await store.providerWriter.publish(engineState("vllm-a", engine.url));
  await store.providerWriter.publish(
    engineState("vllm-embed", embedder.url, {
      loadedModels: ["nomic-embed-text:latest"],
      loadedModelFootprintsMiB: { "nomic-embed-text:latest": 262 },
      loadedModelContextLengths: { "nomic-embed-text:latest": 2048 },
    }),
  );
  sidecar = await startSidecarProcess([
    "--nats",
    nats.url,
    "--proxy-listen",
    "127.0.0.1:0",
    "--agent",
    "crew/a",
  ]);
  base = `http://${sidecar.proxyAddress}`;
});

afterAll(async () => {
  expect(await sidecar?.stop()).toBe(0);
  await engine?.close();
  await embedder?.close();
  await store?.close();
  await nats?.dispose();
});

const client = () => ollamaWithHeaders(base);
const released = () => allTicketsReleased(store);

const tools = [
  {
    type: "function",
    function: {
      name: "weather",
      description: "the weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

describe("Ollama API on an OpenAI-only engine", () => {
  it("chat, whole: translated there and back, with the engine named and the dropped fields listed", async () => {
    const { ollama, headers } = client();
    const r = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "hello" }],
      options: { num_predict: 5, temperature: 0.1, num_ctx: 4096, mirostat: 1 },
      keep_alive: "10m",
    });
    expect(r).toMatchObject({ model: "qwen3:8b", done: true, done_reason: "length", eval_count: 5 });
    expect(r.message.role).toBe("assistant");
    expect(r.message.content.length).toBeGreaterThan(0);
    expect(r.prompt_eval_count).toBeGreaterThan(0);
    expect(headers().get("x-kubemoot-engine")).toBe("vllm");
    expect(headers().get("x-kubemoot-provider")).toBe("vllm-a");
    expect(headers().get("x-kubemoot-dropped")?.split(",").sort()).toEqual(
      ["keep_alive", "options.mirostat", "options.num_ctx"].sort(),
    );
    await released();
  });

  it("chat, streamed: NDJSON chunks and one final done chunk with the usage counts", async () => {
    const { ollama, headers } = client();
    const parts = [];
    for await (const p of await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "tell me more" }],
      stream: true,
      options: { num_predict: 6 },
    })) {
      parts.push(p);
    }
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.slice(0, -1).every((p) => p.done === false)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ done: true, done_reason: "length", eval_count: 6 });
    expect(parts.at(-1)?.prompt_eval_count).toBeGreaterThan(0);
    expect(parts.map((p) => p.message.content).join("").length).toBeGreaterThan(0);
    expect(headers().get("x-kubemoot-engine")).toBe("vllm");
    expect(headers().get("x-kubemoot-dropped")).toBeNull();
    await released();
  });

  it("tools: the engine's tool call comes back with its arguments as an object, streamed or not", async () => {
    const { ollama } = client();
    const messages = [{ role: "user", content: "what is the weather in Oslo? use weather" }];
    const whole = await ollama.chat({ model: "qwen3:8b", messages, tools });
    const call = whole.message.tool_calls?.[0];
    expect(call?.function.name).toBe("weather");
    expect(typeof call?.function.arguments).toBe("object");
    expect(typeof (call?.function.arguments as { city?: unknown } | undefined)?.city).toBe("string");
    const streamed = [];
    for await (const p of await ollama.chat({ model: "qwen3:8b", messages, tools, stream: true })) {
      streamed.push(...(p.message.tool_calls ?? []));
    }
    expect(streamed.map((c) => c.function.name)).toEqual(["weather"]);
    expect(typeof streamed[0]?.function.arguments).toBe("object");
    // The tool's result goes back (tool_name ties it to the call) and the engine answers.
    const after = await ollama.chat({
      model: "qwen3:8b",
      messages: [...messages, whole.message, { role: "tool", content: "cold", tool_name: "weather" }],
      tools,
      options: { num_predict: 4 },
    });
    expect(after.done).toBe(true);
    await released();
  });

  it("format: json and a JSON schema give JSON content", async () => {
    const { ollama } = client();
    const schema = {
      type: "object",
      properties: { answer: { type: "string" }, score: { type: "integer" } },
      required: ["answer", "score"],
    };
    const r = await ollama.chat({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "rate it" }],
      format: schema,
    });
    const v = JSON.parse(r.message.content) as { answer: unknown; score: unknown };
    expect(typeof v.answer).toBe("string");
    expect(Number.isInteger(v.score)).toBe(true);
    const j = await ollama.generate({ model: "qwen3:8b", prompt: "json please", format: "json" });
    expect(() => JSON.parse(j.response ?? "")).not.toThrow();
    await released();
  });

  it("generate, whole and streamed, and embed", async () => {
    const { ollama, headers } = client();
    const g = await ollama.generate({
      model: "qwen3:8b",
      prompt: "Write a haiku.",
      system: "be terse",
      options: { num_predict: 5 },
    });
    expect(g).toMatchObject({ done: true, eval_count: 5, model: "qwen3:8b" });
    expect(g.response?.length).toBeGreaterThan(0);
    const parts = [];
    for await (const p of await ollama.generate({
      model: "qwen3:8b",
      prompt: "Again.",
      stream: true,
      options: { num_predict: 4 },
    })) {
      parts.push(p);
    }
    expect(parts.at(-1)).toMatchObject({ done: true, eval_count: 4 });
    expect(parts.map((p) => p.response).join("").length).toBeGreaterThan(0);
    const e = await ollama.embed({ model: "nomic-embed-text", input: ["one", "two"] });
    expect(e.embeddings).toHaveLength(2);
    expect(e.embeddings[0]?.length).toBeGreaterThan(0);
    expect(headers().get("x-kubemoot-engine")).toBe("vllm");
    await released();
  });
});

describe("the gRPC API across engines", () => {
  it("Place and Attribute name the engine, so that an agent knows which API its endpoint speaks", async () => {
    const api = schedulerClient(sidecar.apiAddress);
    try {
      const r = await api.call("Place", {
        agent: "crew/a",
        candidates: [{ model: "qwen3:8b", score: 100 }],
        promptChars: 40,
      });
      expect(r.result).toBe("placement");
      expect(r.placement).toMatchObject({ provider: "vllm-a", endpoint: engine.url, engine: "vllm" });
      const ticketId = r.placement.ticketId as string;
      expect(await api.call("Attribute", { ticketId })).toMatchObject({ provider: "vllm-a", engine: "vllm" });
      await api.call("Release", { ticketId, outcome: "CALL_OUTCOME_SUCCEEDED", latencyMs: 5 });
      expect(await api.call("Attribute", { ticketId })).toMatchObject({
        engine: "vllm",
        outcome: "CALL_OUTCOME_SUCCEEDED",
      });
    } finally {
      api.close();
    }
    await released();
  });
});

describe("an engine dying mid-stream", () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill("SIGKILL");
  });

  it("the Ollama client gets a clear error and the ticket is released", async () => {
    // An engine that streams slowly: killed after the third chunk.
    // The benchmark's emulator child: startEmulator in a process of its own, options as JSON.
    child = spawn(
      process.execPath,
      [
        path.join(repoRoot, "dist", "bench", "proxy", "emulator-child.js"),
        // 20 tokens a second: the answer is still streaming when the engine is killed.
        JSON.stringify({ engine: "vllm", models: { "qwen3:4b": 2600 }, contextLength: 8192, tokensPerS: 20 }),
      ],
      { cwd: repoRoot, stdio: ["pipe", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    await waitUntil(() => /READY (http:\/\/\S+)/.test(out), 20_000, "emulator listening");
    const url = /READY (http:\/\/\S+)/.exec(out)?.[1] ?? "";
    await store.providerWriter.publish(
      engineState("vllm-dying", url, {
        loadedModels: ["qwen3:4b"],
        loadedModelFootprintsMiB: { "qwen3:4b": 2600 },
        loadedModelContextLengths: { "qwen3:4b": 8192 },
      }),
    );
    await waitUntil(
      async () => (await (await fetch(`${base}/api/tags`)).text()).includes("qwen3:4b"),
      5_000,
      "the sidecar sees the engine",
    );
    const { ollama } = client();
    const stream = await ollama.chat({
      model: "qwen3:4b",
      messages: [{ role: "user", content: "a long story" }],
      stream: true,
    });
    const got: string[] = [];
    const err = await (async () => {
      try {
        for await (const p of stream) {
          got.push(p.message.content);
          if (got.length === 3) child?.kill("SIGKILL");
        }
        return undefined;
      } catch (e) {
        return e as Error;
      }
    })();
    expect(got.length).toBeGreaterThanOrEqual(3);
    expect(err?.message).toMatch(/vllm-dying broke off the answer/);
    await released();
  });
});

describe("the context check with the engine's own tokenizer", () => {
  // A fleet of its own (nats-server and sidecar): only the two 4096-token engines, so that no
  // larger context elsewhere draws the long prompts away.
  let nats2: NatsServer;
  let store2: StateStore;
  let sidecar2: SidecarProcess;
  const small: EmulatorHandle[] = [];
  beforeAll(async () => {
    nats2 = await NatsServer.start();
    store2 = await openStateStore(nats2.url);
    for (const [name, model, tokenize] of [
      ["vllm-tok", "qwen3:1.7b", true],
      ["vllm-notok", "qwen3:0.6b", false],
    ] as const) {
      const e = await startEmulator({
        listen: "127.0.0.1:0",
        engine: "vllm",
        vramMiB: 24_563,
        models: { [model]: 1400 },
        contextLength: 4096,
        timeScale: 0.01,
      });
      small.push(e);
      await store2.providerWriter.publish(
        engineState(name, e.url, {
          contextLength: 4096,
          loadedModels: [model],
          loadedModelFootprintsMiB: { [model]: 1400 },
          loadedModelContextLengths: { [model]: 4096 },
          ...(tokenize ? { tokenize: true } : {}),
        }),
      );
    }
    sidecar2 = await startSidecarProcess([
      "--nats",
      nats2.url,
      "--proxy-listen",
      "127.0.0.1:0",
      "--agent",
      "crew/b",
    ]);
  });
  afterAll(async () => {
    expect(await sidecar2?.stop()).toBe(0);
    for (const e of small) await e.close();
    await store2?.close();
    await nats2?.dispose();
  });

  it("the engine's exact count refuses a prompt the estimate would send; without it the engine refuses, in Ollama's shape", async () => {
    const { ollama, headers } = ollamaWithHeaders(`http://${sidecar2.proxyAddress}`);
    const fails = (e: unknown) => e as { status_code?: number; error?: string };
    // 16,000 characters: about 3,050 tokens by the generous estimate (it fits 4096), 4,579 by
    // the engine's tokenizer with its chat template (it does not).
    const prompt = "x".repeat(16_000);
    const refused = await ollama
      .chat({ model: "qwen3:1.7b", messages: [{ role: "user", content: prompt }] })
      .then(() => undefined, fails);
    expect(refused?.status_code).toBe(413);
    expect(refused?.error).toMatch(/\(4579 tokens, counted by the engine\).*4096-token context/);
    expect(headers().get("x-kubemoot-reason")).toBe("prompt-too-large");
    expect(headers().get("x-kubemoot-engine")).toBe("vllm");
    // A prompt that fits by the engine's count goes through.
    const ok = await ollama.chat({
      model: "qwen3:1.7b",
      messages: [{ role: "user", content: "x".repeat(7_000) }],
      options: { num_predict: 2 },
    });
    expect(ok.done).toBe(true);
    // Without a tokenizer the estimate lets it through and the engine refuses it: its error
    // comes back as an Ollama error.
    const forwarded = await ollama
      .chat({ model: "qwen3:0.6b", messages: [{ role: "user", content: prompt }] })
      .then(() => undefined, fails);
    expect(forwarded?.status_code).toBe(400);
    expect(forwarded?.error).toMatch(/maximum context length is 4096 tokens/);
    expect(headers().get("x-kubemoot-provider")).toBe("vllm-notok");
    await allTicketsReleased(store2);
  });
});
