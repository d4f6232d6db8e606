// Issue 20, the proxy across engines, on the two other personalities: llama.cpp's server and
// SGLang (test/sidecar/proxy-engines.test.ts covers vLLM in depth). A sidecar process on a real
// nats-server whose provider states say these engines serve two models; the official Ollama
// client calls /api/chat (whole, streamed, with tools) and /api/generate through the proxy,
// which translates each call to the engine's OpenAI routes and the answer back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderState } from "../../src/core/index.js";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { allTicketsReleased, ollamaWithHeaders } from "../helpers/ollama-proxy-client.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { providerState } from "../helpers/state-fixtures.js";

const ENGINES = [
  { engine: "llamacpp", provider: "llama-box", model: "llama3.2:1b" },
  { engine: "sglang", provider: "sglang-box", model: "qwen3:1.7b" },
] as const;

let nats: NatsServer;
let store: StateStore;
let sidecar: SidecarProcess;
const emulators: EmulatorHandle[] = [];

// Probed "in the future": the states never go stale while the tests run (src/core eligibility).
const probed = () => new Date(Date.now() + 10 * 60_000).toISOString();

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  for (const e of ENGINES) {
    const emulator = await startEmulator({
      listen: "127.0.0.1:0",
      engine: e.engine,
      vramMiB: 24_563,
      models: { [e.model]: 1300 },
      contextLength: 8192,
      timeScale: 0.01,
    });
    emulators.push(emulator);
    const state: ProviderState = providerState(e.provider, {
      endpoint: emulator.url,
      engine: e.engine,
      maxParallel: 4,
      contextLength: 8192,
      loadedModels: [e.model],
      loadedModelFootprintsMiB: { [e.model]: 1300 },
      loadedModelContextLengths: { [e.model]: 8192 },
      availableModelFootprintsMiB: {},
      lastProbedAt: probed(),
    });
    await store.providerWriter.publish(state);
  }
  sidecar = await startSidecarProcess([
    "--nats",
    nats.url,
    "--proxy-listen",
    "127.0.0.1:0",
    "--agent",
    "crew/a",
  ]);
});

afterAll(async () => {
  expect(await sidecar?.stop()).toBe(0);
  for (const e of emulators) await e.close();
  await store?.close();
  await nats?.dispose();
});

const client = () => ollamaWithHeaders(`http://${sidecar.proxyAddress}`);
const released = () => allTicketsReleased(store);

describe.each(ENGINES)("Ollama API on $engine", ({ engine, model }) => {
  it("chat, whole and streamed, is translated there and back, with the engine named", async () => {
    const { ollama, headers } = client();
    const whole = await ollama.chat({
      model,
      messages: [{ role: "user", content: "say hello" }],
      options: { num_predict: 5, temperature: 0.2, seed: 7 },
    });
    expect(whole).toMatchObject({ model, done: true, eval_count: 5, message: { role: "assistant" } });
    expect(whole.message.content.length).toBeGreaterThan(0);
    expect(whole.prompt_eval_count).toBeGreaterThan(0);
    expect(headers().get("x-kubemoot-engine")).toBe(engine);
    const parts = [];
    for await (const p of await ollama.chat({
      model,
      messages: [{ role: "user", content: "tell me more" }],
      stream: true,
      options: { num_predict: 4 },
    })) {
      parts.push(p);
    }
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.slice(0, -1).every((p) => p.done === false)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ done: true, eval_count: 4 });
    expect(headers().get("x-kubemoot-engine")).toBe(engine);
    await released();
  });

  it("tools and generate", async () => {
    const { ollama } = client();
    const answer = await ollama.chat({
      model,
      messages: [{ role: "user", content: "what is the weather in Oslo? use weather" }],
      tools: [
        {
          type: "function",
          function: {
            name: "weather",
            description: "the weather in a city",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
        },
      ],
    });
    const call = answer.message.tool_calls?.[0];
    expect(call?.function.name).toBe("weather");
    expect(typeof call?.function.arguments).toBe("object");
    const gen = await ollama.generate({ model, prompt: "once upon a time", options: { num_predict: 3 } });
    expect(gen).toMatchObject({ model, done: true, eval_count: 3 });
    expect(gen.response).toBeTruthy();
    await released();
  });
});
