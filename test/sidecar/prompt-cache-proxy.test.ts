// Issue 31: what an engine reused from its prompt cache, through a sidecar process's proxy with
// the official ollama and openai clients (docs/rules/engines.md "Prompt caches"): an agent
// loop's next turn comes back with the engine's cached share untouched on its own API, carried
// across on a translated call (llama.cpp's timings → Ollama's prompt_eval_cached_count), and
// reported by Attribute and the sidecar's metrics.
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { readPromSamples } from "../../src/engines/index.js";
import { memorySidecarArgs, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

let ollamaGpu: EmulatorHandle;
let llamaBox: EmulatorHandle;
let sidecar: SidecarProcess;
let base = "";

const OLLAMA_MODEL = "qwen3:8b";
const LLAMA_MODEL = "qwen3:1.7b";

beforeAll(async () => {
  const common = {
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    contextLength: 8192,
    timeScale: 0.01,
    outputTokens: 8,
  };
  ollamaGpu = await startEmulator({ ...common, models: { [OLLAMA_MODEL]: 4863 } });
  llamaBox = await startEmulator({
    ...common,
    engine: "llamacpp",
    models: { [LLAMA_MODEL]: 1300 },
    slots: 2,
  });
  sidecar = await startSidecarProcess(
    memorySidecarArgs(
      "--provider",
      `gpu=${ollamaGpu.url},vram=24563,context=8192`,
      "--provider",
      `box=${llamaBox.url},engine=llamacpp,vram=24563`,
      "--probe-interval-ms",
      "250",
    ),
  );
  base = `http://${sidecar.proxyAddress}`;
  // Both providers probed: their models are offered.
  await waitUntil(
    async () => {
      const tags = (await (await fetch(`${base}/api/tags`)).json()) as { models: { name: string }[] };
      return [OLLAMA_MODEL, LLAMA_MODEL].every((m) => tags.models.some((t) => t.name === m));
    },
    10_000,
    "both providers published",
  );
});

afterAll(async () => {
  expect(await sidecar?.stop()).toBe(0);
  await ollamaGpu?.close();
  await llamaBox?.close();
});

const system = { role: "system", content: "You plan the crew's releases. Be brief." } as const;
const ask = { role: "user", content: "What ships this week?" } as const;
const more = { role: "user", content: "And next week?" } as const;

interface AttributionJson {
  cachedPromptTokens?: string;
  promptTokens?: string;
  expectedCachedPromptTokens?: string;
  prefillSavedMs?: string;
}

async function attribute(ticketId: string): Promise<AttributionJson> {
  const res = await fetch(`${sidecar.apiUrl}/kubemoot.scheduler.v1.SchedulerService/Attribute`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ticketId }),
  });
  return (await res.json()) as AttributionJson;
}

async function cacheMetrics(
  provider: string,
  model: string,
): Promise<{ hit: number; all: number; savedS: number }> {
  const text = await (await fetch(`${sidecar.apiUrl}/metrics`)).text();
  const pick = (name: string) =>
    readPromSamples(text, (n) => n === name).find(
      (s) => s.labels.provider === provider && s.labels.model === model,
    )?.value ?? 0;
  return {
    hit: pick("kubemoot_prompt_cache_hit_tokens_total"),
    all: pick("kubemoot_prompt_cache_tokens_total"),
    savedS: pick("kubemoot_prompt_cache_prefill_saved_seconds_total"),
  };
}

/** The official Ollama client, keeping its last answer's headers (the ticket, the expected cache). */
function ollamaClient(): { ollama: Ollama; ticket: () => string; expectedCached: () => number } {
  let last: Headers | undefined;
  const ollama = new Ollama({
    host: base,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      last = res.headers;
      return res;
    },
  });
  return {
    ollama,
    ticket: () => last?.get("x-kubemoot-ticket") ?? "",
    expectedCached: () => Number(last?.get("x-kubemoot-expected-cached-tokens") ?? Number.NaN),
  };
}

describe("an agent loop's next turn through the proxy", () => {
  it("on Ollama: prompt_eval_cached_count comes through, and Attribute and the metrics report it", async () => {
    const { ollama, ticket, expectedCached } = ollamaClient();
    const before = await cacheMetrics("gpu", OLLAMA_MODEL);
    const first = await ollama.chat({ model: OLLAMA_MODEL, messages: [system, ask] });
    expect(expectedCached()).toBe(0);
    const turn2 = [system, ask, { role: "assistant", content: first.message.content }, more];
    const second = (await ollama.chat({ model: OLLAMA_MODEL, messages: turn2 })) as unknown as {
      prompt_eval_count: number;
      prompt_eval_cached_count: number;
    };
    expect(second.prompt_eval_cached_count).toBeGreaterThan(0);
    expect(second.prompt_eval_cached_count).toBeLessThan(second.prompt_eval_count);
    // The sidecar expected the copy to hold the first turn and its answer: what the engine reused.
    expect(expectedCached()).toBeGreaterThan(0);
    const a = await attribute(ticket());
    expect(Number(a.cachedPromptTokens)).toBe(second.prompt_eval_cached_count);
    expect(Number(a.expectedCachedPromptTokens)).toBe(expectedCached());
    expect(Number(a.prefillSavedMs)).toBeGreaterThan(0);
    const after = await cacheMetrics("gpu", OLLAMA_MODEL);
    expect(after.hit - before.hit).toBe(second.prompt_eval_cached_count);
    expect(after.savedS - before.savedS).toBeCloseTo(Number(a.prefillSavedMs) / 1000, 2);
    expect(after.all - before.all).toBe(first.prompt_eval_count + second.prompt_eval_count);
  });

  it("on llama.cpp: cached_tokens on its OpenAI route, and prompt_eval_cached_count when translated", async () => {
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0 });
    const first = await openai.chat.completions.create({ model: LLAMA_MODEL, messages: [system, ask] });
    const turn2 = [
      system,
      ask,
      { role: "assistant" as const, content: first.choices[0]!.message.content ?? "" },
      more,
    ];
    const { data: second, response } = await openai.chat.completions
      .create({ model: LLAMA_MODEL, messages: turn2 })
      .withResponse();
    const cached = second.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    expect(cached).toBeGreaterThan(0);
    expect(
      Number((await attribute(response.headers.get("x-kubemoot-ticket") ?? "")).cachedPromptTokens),
    ).toBe(cached);
    // The Ollama API on the same engine: the proxy translates, and carries the cached share over.
    const { ollama } = ollamaClient();
    const translated = (await ollama.chat({ model: LLAMA_MODEL, messages: turn2 })) as unknown as {
      prompt_eval_cached_count?: number;
    };
    expect(translated.prompt_eval_cached_count).toBeGreaterThan(0);
  });

  it("Release refuses more cached tokens than prompt tokens, naming the field", async () => {
    const res = await fetch(`${sidecar.apiUrl}/kubemoot.scheduler.v1.SchedulerService/Release`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ticketId: "t-1", promptTokens: "10", cachedPromptTokens: "11" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(
      /cached_prompt_tokens: more than prompt_tokens/,
    );
  });
});
