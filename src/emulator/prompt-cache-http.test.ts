// The emulator's prompt caches over HTTP, with the official ollama and openai clients
// (docs/rules/engines.md "Prompt caches"): an agent loop's next turn reuses what its last turn
// left in the cache and is charged prefill only for the rest; each engine reports it in its own
// fields; a slot's cache goes to the next conversation that takes the slot, a copy's prefix
// cache is shared by every conversation, and an unload empties the cache.
import { Ollama } from "ollama";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { emulatorStarter } from "../../test/helpers/engine-emulator.js";
import { GENERATION_PROMPT_TOKENS, messageTokens } from "./tokenizer.js";

const start = emulatorStarter({ models: { "qwen3:8b": 4863 }, contextLength: 8192, outputTokens: 6 });
const PROMPT_TPS = 1000;

const system = { role: "system", content: "You are the crew's planner. Answer in one line." } as const;
const user1 = { role: "user", content: "List three rivers of France." } as const;
const user2 = { role: "user", content: "Which is the longest?" } as const;
const ns = (ms: number) => Math.round(ms * 1e6);

describe("Ollama: one cache per slot", () => {
  it("a conversation's next turn reuses its last turn, answer included, and evaluates only the rest", async () => {
    const emu = await start({ promptTokensPerS: PROMPT_TPS });
    const ollama = new Ollama({ host: emu.url });
    const first = await ollama.chat({ model: "qwen3:8b", messages: [system, user1] });
    expect(first).not.toHaveProperty("prompt_eval_cached_count");
    expect(first.prompt_eval_duration).toBe(ns(first.prompt_eval_count));
    const turn2 = [system, user1, { role: "assistant", content: first.message.content }, user2];
    const second = await ollama.chat({ model: "qwen3:8b", messages: turn2 });
    const cached = (second as unknown as { prompt_eval_cached_count: number }).prompt_eval_cached_count;
    // Everything but the new user message and the generation prompt was in the slot.
    expect(cached).toBe(second.prompt_eval_count - messageTokens(user2) - GENERATION_PROMPT_TOKENS);
    expect(second.prompt_eval_duration).toBe(ns(second.prompt_eval_count - cached));
  });

  it("a slot keeps one conversation: another one in between takes it (1 slot), two slots keep both", async () => {
    const run = async (numParallel: number) => {
      const ollama = new Ollama({ host: (await start({ numParallel })).url });
      const a = [system, user1];
      const first = await ollama.chat({ model: "qwen3:8b", messages: a });
      await ollama.chat({
        model: "qwen3:8b",
        messages: [{ role: "user", content: "Something else entirely." }],
      });
      const again = await ollama.chat({
        model: "qwen3:8b",
        messages: [...a, { role: "assistant", content: first.message.content }, user2],
      });
      return (again as unknown as { prompt_eval_cached_count?: number }).prompt_eval_cached_count ?? 0;
    };
    expect(await run(1)).toBe(0);
    expect(await run(2)).toBeGreaterThan(0);
  });

  it("an unload empties the cache; the OpenAI route reports cached_tokens", async () => {
    const emu = await start();
    const ollama = new Ollama({ host: emu.url });
    await ollama.chat({ model: "qwen3:8b", messages: [system, user1] });
    const openai = new OpenAI({ baseURL: `${emu.url}/v1`, apiKey: "x", maxRetries: 0 });
    const hit = await openai.chat.completions.create({ model: "qwen3:8b", messages: [system, user1] });
    expect(hit.usage?.prompt_tokens_details?.cached_tokens).toBe((hit.usage?.prompt_tokens ?? 0) - 1);
    await ollama.generate({ model: "qwen3:8b", prompt: "", keep_alive: 0 });
    await new Promise((r) => setTimeout(r, 50));
    const cold = await openai.chat.completions.create({ model: "qwen3:8b", messages: [system, user1] });
    expect(cold.usage?.prompt_tokens_details).toBeUndefined();
  });
});

describe("fixed-model engines", () => {
  const engine = (name: "vllm" | "sglang" | "llamacpp", more = {}) =>
    start({ engine: name, slots: 2, promptTokensPerS: PROMPT_TPS, ...more });
  const ask = async (url: string, messages: { role: string; content: string }[]) =>
    (await (
      await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "qwen3:8b", messages, max_tokens: 4 }),
      })
    ).json()) as { usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } } } & {
      timings?: { cache_n: number; prompt_n: number };
    };

  it("vLLM and SGLang share one prefix cache across conversations, reported when their flag is on", async () => {
    for (const name of ["vllm", "sglang"] as const) {
      const emu = await engine(name, { cacheReport: true });
      await ask(emu.url, [system, user1]);
      // Another agent with the same system prompt: its system message is served from the cache.
      const other = await ask(emu.url, [system, { role: "user", content: "Plan the release." }]);
      expect([name, other.usage.prompt_tokens_details?.cached_tokens]).toEqual([name, messageTokens(system)]);
      const quiet = await engine(name);
      await ask(quiet.url, [system, user1]);
      const unreported = await ask(quiet.url, [system, user1]);
      expect([name, unreported.usage.prompt_tokens_details]).toEqual([name, undefined]);
    }
  });

  it("llama.cpp reports cache_n and cached_tokens on every answer, 0 included", async () => {
    const emu = await engine("llamacpp");
    const first = await ask(emu.url, [system, user1]);
    expect(first.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 });
    expect(first.timings).toMatchObject({ cache_n: 0, prompt_n: first.usage.prompt_tokens });
    const again = await ask(emu.url, [system, user1]);
    expect(again.timings).toMatchObject({ cache_n: again.usage.prompt_tokens - 1, prompt_n: 1 });
  });
});
