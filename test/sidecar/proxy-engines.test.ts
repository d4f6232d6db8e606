// Issue 20, the proxy across engines: a sidecar process on a real nats-server, whose provider
// states (written straight into the shared state, as the operator's probes would) say an
// OpenAI-only engine serves the model. The official Ollama client calls /api/chat, /api/generate
// and /api/embed through the proxy; the proxy translates them to the engine's OpenAI routes and
// the answers back, streaming included, and names what had no equivalent in X-Kubemoot-Dropped.
// The engines are emulators over HTTP; the one that dies mid-stream is a separate process,
// killed with SIGKILL.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { Ollama } from "ollama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderState } from "../../src/core/index.js";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { repoRoot, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { providerState } from "../helpers/state-fixtures.js";
import { waitUntil } from "../helpers/wait-until.js";

let nats: NatsServer;
let store: StateStore;
let engine: EmulatorHandle;
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
    loadedModels: ["qwen3:8b", "nomic-embed-text:latest"],
    loadedModelFootprintsMiB: { "qwen3:8b": 4900, "nomic-embed-text:latest": 262 },
    loadedModelContextLengths: { "qwen3:8b": 8192, "nomic-embed-text:latest": 2048 },
    availableModelFootprintsMiB: {},
    lastProbedAt: probed(),
    ...over,
  });
}

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  engine = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    models: { "qwen3:8b": 4900, "nomic-embed-text": 262 },
    contextLength: 8192,
    timeScale: 0.01,
  });
  // The Ollama emulator serves OpenAI's routes; refusing Ollama's as vLLM does (404) makes sure
  // every answer here came through translation.
  engine.setFaults([{ kind: "error", status: 404, path: "/api/", message: "Not Found" }]);
  await store.providerWriter.publish(engineState("vllm-a", engine.url));
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
  await store?.close();
  await nats?.dispose();
});

/** An Ollama client that keeps the last answer's headers. */
function client(): { ollama: Ollama; headers: () => Headers } {
  let last = new Headers();
  const ollama = new Ollama({
    host: base,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      last = res.headers;
      return res;
    },
  });
  return { ollama, headers: () => last };
}

async function released(): Promise<void> {
  await waitUntil(async () => (await store.tickets.allTickets()).size === 0, 5_000, "tickets released");
}

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
    expect(typeof (call?.function.arguments as { city?: unknown }).city).toBe("string");
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

describe("an engine dying mid-stream", () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill("SIGKILL");
  });

  it("the Ollama client gets a clear error and the ticket is released", async () => {
    // An engine that answers three tokens and then stalls: killed while it stalls.
    child = spawn(
      process.execPath,
      [
        path.join(repoRoot, "bin", "kubemoot-scheduler.js"),
        "emulate",
        "--listen",
        "127.0.0.1:0",
        "--model",
        "qwen3:4b=2600",
        "--time-scale",
        "0.01",
        "--fault",
        "error:status=404,path=/api/,message=Not Found",
        "--fault",
        "stall:afterTokens=3,ms=600000",
      ],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    await waitUntil(() => /listening on (http:\/\/\S+)/.test(out), 20_000, "emulator listening");
    const url = /listening on (http:\/\/\S+)/.exec(out)?.[1] ?? "";
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
