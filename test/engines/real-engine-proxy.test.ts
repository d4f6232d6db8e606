// Issue 30, the whole path with no emulator on it: a real llama.cpp (`kubemoot-scheduler engine`,
// node-llama-cpp) serving a generated model, the operator as a process probing it as a
// ModelProvider of engine llamacpp and publishing to a real nats-server, and a sidecar process
// whose proxy the official OpenAI and Ollama clients call. Checked: chat whole and streamed on
// both APIs, exact token counts, tools refused clearly without blaming the engine, a prompt that
// fills the context refused by the sidecar before the engine sees it, two slots busy and a third
// call waiting in the sidecar, a repeated prefix served from the slot's cache, an engine killed
// mid-stream, and the engine restarted (docs/rules/engines.md "A real llama.cpp engine").
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderState } from "../../src/core/index.js";
import { readPromSamples } from "../../src/engines/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { type LlamaEngineProcess, startLlamaEngineProcess } from "../helpers/llama-engine-process.js";
import { NatsServer } from "../helpers/nats-server.js";
import { allTicketsReleased, ollamaWithHeaders } from "../helpers/ollama-proxy-client.js";
import { repoRoot, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const PROVIDER = "real-llama";
const MODEL = "tiny";
const SLOT_CTX = 1024; // --ctx 2048 over 2 slots
let nats: NatsServer;
let store: StateStore;
let engine: LlamaEngineProcess;
let operator: ChildProcess;
let operatorOut = "";
let sidecar: SidecarProcess;
let dir: string;
let base = "";

const providerYaml = (endpoint: string) => `apiVersion: kubemoot.ai/v1alpha1
kind: ModelProvider
metadata:
  name: ${PROVIDER}
  namespace: kubemoot
spec:
  type: ollama
  engine: llamacpp
  endpoint: ${endpoint}
  scheduling:
    weight: 100
    memoryMiB: 4096
`;

const published = () => store.providers.get(PROVIDER);

beforeAll(async () => {
  nats = await NatsServer.start();
  store = await openStateStore(nats.url);
  engine = await startLlamaEngineProcess({ args: ["--parallel", "2", "--ctx", "2048", "--threads", "1"] });
  dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-real-"));
  writeFileSync(path.join(dir, "providers.yaml"), providerYaml(engine.url));
  operator = spawn(
    process.execPath,
    [
      path.join(repoRoot, "bin/kubemoot-scheduler.js"),
      "operator",
      "--manifests",
      dir,
      "--bindings-dir",
      path.join(dir, "out"),
      "--nats",
      nats.url,
      "--probe-interval-ms",
      "300",
    ],
    { env: { ...process.env, KUBEMOOT_LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  operator.stdout!.on("data", (d) => {
    operatorOut += d;
  });
  operator.stderr!.on("data", (d) => {
    operatorOut += d;
  });
  await waitUntil(
    async () => (await published())?.ready === true,
    20_000,
    `the operator's probe\n${operatorOut}`,
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
  if (operator && operator.exitCode === null) {
    const exited = new Promise<number | null>((r) => operator.once("exit", (c) => r(c)));
    operator.kill("SIGTERM");
    expect(await exited, operatorOut).toBe(0);
  }
  await engine?.stop();
  if (engine) rmSync(engine.modelsDir, { recursive: true, force: true });
  await store?.close();
  await nats?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const metric = async (name: string) => {
  const text = await (await fetch(`${engine.url}/metrics`)).text();
  return readPromSamples(text, (n) => n === name)[0]?.value ?? Number.NaN;
};
const openai = () => new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0 });
const user = (content: string) => [{ role: "user" as const, content }];

/** The engine's own count of a chat's prompt: /apply-template, then /tokenize with BOS. */
async function engineCount(messages: unknown[]): Promise<number> {
  const post = async (route: string, body: unknown) =>
    (await (
      await fetch(`${engine.url}${route}`, { method: "POST", body: JSON.stringify(body) })
    ).json()) as Record<string, unknown>;
  const { prompt } = await post("/apply-template", { messages });
  return ((await post("/tokenize", { content: prompt, add_special: true })).tokens as number[]).length;
}

/** A one-message chat whose prompt is exactly `n` tokens ("~" is one token each here). */
async function chatOfTokens(n: number): Promise<{ role: "user"; content: string }[]> {
  const base1 = (await engineCount(user("~"))) - 1;
  const messages = user("~".repeat(n - base1));
  expect(await engineCount(messages)).toBe(n);
  return messages;
}

describe("the operator probes the real engine", () => {
  it("publishes it as a llama.cpp provider: its model, context, slots, tokenizer and resident memory", async () => {
    const s = (await published()) as ProviderState;
    expect(s).toMatchObject({
      ready: true,
      engine: "llamacpp",
      loadedModels: [MODEL],
      loadedModelContextLengths: { [MODEL]: SLOT_CTX },
      maxParallel: 2,
      tokenize: true,
      totalVramMiB: 4096,
    });
    // Host memory stands for VRAM: the engine's resident set, not the whole 4096 MiB.
    const footprint = s.loadedModelFootprintsMiB[MODEL]!;
    expect(footprint).toBeGreaterThan(30);
    expect(footprint).toBeLessThan(4096);
  });
});

describe("official clients through the sidecar's proxy", () => {
  it("OpenAI chat, whole and streamed, with the engine's exact counts", async () => {
    const messages = user("Describe the Loire valley in one line.");
    const counted = await engineCount(messages);
    const whole = await openai().chat.completions.create({
      model: MODEL,
      messages,
      max_tokens: 6,
      temperature: 0,
    });
    expect(whole.usage).toMatchObject({ prompt_tokens: counted, completion_tokens: 6 });
    expect(whole.choices[0]!.finish_reason).toBe("length");
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined;
    const stream = await openai().chat.completions.create({
      model: MODEL,
      messages,
      max_tokens: 6,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      usage = chunk.usage ?? usage;
    }
    // Greedy decoding: the stream is the same answer, token for token.
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(usage).toMatchObject({ prompt_tokens: counted, completion_tokens: 6 });
    await allTicketsReleased(store);
  });

  it("Ollama chat, whole and streamed, translated to llama.cpp's OpenAI route and back", async () => {
    const { ollama, headers } = ollamaWithHeaders(base);
    const messages = user("Name a river.");
    const whole = await ollama.chat({ model: MODEL, messages, options: { num_predict: 5, temperature: 0 } });
    expect(whole).toMatchObject({
      model: MODEL,
      done: true,
      eval_count: 5,
      prompt_eval_count: await engineCount(messages),
    });
    expect(headers().get("x-kubemoot-engine")).toBe("llamacpp");
    expect(headers().get("x-kubemoot-provider")).toBe(PROVIDER);
    const parts = [];
    for await (const p of await ollama.chat({
      model: MODEL,
      messages,
      stream: true,
      options: { num_predict: 4 },
    }))
      parts.push(p);
    expect(parts.slice(0, -1).every((p) => p.done === false)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ done: true, eval_count: 4 });
    await allTicketsReleased(store);
  });

  it("tools: a clear error naming the engine's refusal, and the engine is not blamed for it", async () => {
    const tools = [
      {
        type: "function" as const,
        function: {
          name: "weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
        },
      },
    ];
    const err = await openai()
      .chat.completions.create({ model: MODEL, messages: user("weather in Oslo?"), tools })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toMatch(/tools.*--jinja/);
    const ollamaErr = await new Ollama({ host: base })
      .chat({ model: MODEL, messages: user("weather in Oslo?"), tools })
      .catch((e: unknown) => e as { status_code?: number; error?: string });
    expect(ollamaErr).toMatchObject({ status_code: 400 });
    // A caller's request the engine cannot take says nothing of the engine: no suspect mark,
    // and the next call is served there.
    expect((await store.tickets.everything()).suspects.has(PROVIDER)).toBe(false);
    const ok = await openai().chat.completions.create({ model: MODEL, messages: user("hi"), max_tokens: 2 });
    expect(ok.usage?.completion_tokens).toBe(2);
    await allTicketsReleased(store);
  });

  it("a prompt that fills the context is refused by the sidecar (413) and never reaches the engine", async () => {
    const full = await chatOfTokens(SLOT_CTX);
    const before = await metric("llamacpp:prompt_tokens_total");
    const res = await fetch(`${base}/api/chat`, {
      method: "POST",
      body: JSON.stringify({ model: MODEL, messages: full, stream: false }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toMatch(
      `(${SLOT_CTX} tokens, counted by the engine)`,
    );
    const refused = await openai()
      .chat.completions.create({ model: MODEL, messages: full, max_tokens: 2 })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as { code?: string }).code).toBe("context_length_exceeded");
    expect(await metric("llamacpp:prompt_tokens_total")).toBe(before);
    // One token less fits: the engine serves it, and its answer stops at the context.
    const fits = await openai().chat.completions.create({
      model: MODEL,
      messages: await chatOfTokens(SLOT_CTX - 1),
      max_tokens: 8,
    });
    expect(fits.usage).toMatchObject({ prompt_tokens: SLOT_CTX - 1, completion_tokens: 1 });
    expect(fits.choices[0]!.finish_reason).toBe("length");
    await allTicketsReleased(store);
  });

  it("two slots run at once and a third call waits in the sidecar, never at the engine", async () => {
    // Start from a published state that shows the engine idle: a probe that still counts the
    // last test's call would make the sidecar wait for it (docs/rules/engines.md "Placement").
    await waitUntil(async () => (await published())?.activeCount === 0, 10_000, "an idle engine published");
    const seen = { processing: 0, deferred: 0 };
    let running = true;
    const watch = (async () => {
      while (running) {
        seen.processing = Math.max(seen.processing, await metric("llamacpp:requests_processing"));
        seen.deferred = Math.max(seen.deferred, await metric("llamacpp:requests_deferred"));
      }
    })();
    const call = async (i: number) => {
      const { data, response } = await openai()
        .chat.completions.create({
          model: MODEL,
          messages: user(`story ${i}`),
          max_tokens: 600,
          temperature: 0,
        })
        .withResponse();
      return {
        tokens: data.usage?.completion_tokens,
        waitedMs: Number(response.headers.get("x-kubemoot-queue-wait-ms")),
      };
    };
    const answers = await Promise.all([call(1), call(2), call(3)]);
    running = false;
    await watch;
    expect(answers.map((a) => a.tokens)).toEqual([600, 600, 600]);
    expect(seen).toEqual({ processing: 2, deferred: 0 });
    // The third waited in the sidecar (a call may also wait for a probe to show a slot free).
    expect(answers.filter((a) => a.waitedMs > 0).length).toBeGreaterThanOrEqual(1);
    await allTicketsReleased(store);
  });

  it("a conversation's next turn is served from the slot's cache", async () => {
    const turn1 = user(
      "Plan a trip along the Loire, one castle a day, with a market and a vineyard. ".repeat(3),
    );
    const first = await openai().chat.completions.create({ model: MODEL, messages: turn1, max_tokens: 4 });
    const turn2 = [...turn1, { role: "assistant" as const, content: "Day one." }, ...user("And day two?")];
    const second = (await openai().chat.completions.create({
      model: MODEL,
      messages: turn2,
      max_tokens: 4,
    })) as OpenAI.ChatCompletion & { timings: { prompt_n: number; cache_n: number } };
    const cached = second.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    expect(cached).toBeGreaterThanOrEqual((first.usage?.prompt_tokens ?? 0) - 4);
    expect(second.timings.prompt_n).toBe((second.usage?.prompt_tokens ?? 0) - cached);
    await allTicketsReleased(store);
  });
});

describe("the engine fails and comes back", () => {
  it("killed mid-stream: the client gets a named error, and the provider is marked suspect", async () => {
    const stream = await openai().chat.completions.create({
      model: MODEL,
      messages: user("a very long tale"),
      max_tokens: 900,
      stream: true,
    });
    let chunks = 0;
    const error = await (async () => {
      try {
        for await (const _ of stream) {
          if (++chunks === 2) engine.proc.kill("SIGKILL");
        }
        return undefined;
      } catch (err) {
        return err as Error;
      }
    })();
    expect(chunks).toBeGreaterThanOrEqual(2);
    expect(error?.message).toMatch(PROVIDER);
    await waitUntil(
      async () => (await store.tickets.everything()).suspects.has(PROVIDER),
      5_000,
      "suspect mark",
    );
    await allTicketsReleased(store);
  });

  it("restarted on the same address, it is ready again at the next probe and serves", async () => {
    await engine.exited;
    await waitUntil(async () => (await published())?.ready === false, 10_000, "published not ready");
    const url = new URL(engine.url);
    engine = await startLlamaEngineProcess({
      modelsDir: engine.modelsDir,
      listen: `${url.hostname}:${url.port}`,
      args: ["--parallel", "2", "--ctx", "2048", "--threads", "1"],
    });
    await waitUntil(async () => (await published())?.ready === true, 10_000, "ready again");
    const answer = await openai().chat.completions.create({
      model: MODEL,
      messages: user("back?"),
      max_tokens: 3,
    });
    expect(answer.usage?.completion_tokens).toBe(3);
    await allTicketsReleased(store);
  });
});
