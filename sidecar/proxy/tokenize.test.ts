// The tokenizer requests per engine and the count cache, on their own.
import { describe, expect, it } from "vitest";
import { type ExactCount, TokenCountCache, tokenizeKey, tokenizeRequests } from "./tokenize.js";

describe("tokenize requests", () => {
  const chat = { kind: "chat" as const, messages: [{ role: "user", content: "hi" }] };
  it("in each engine's shape; nothing for Ollama, nor for SGLang's chats (raw text only)", () => {
    expect(tokenizeRequests("vllm", "m", chat)).toEqual([
      { path: "/tokenize", body: { model: "m", messages: chat.messages, add_generation_prompt: true } },
    ]);
    // The model names which model counts on a llama.cpp server of several.
    expect(tokenizeRequests("llamacpp", "m", chat)).toEqual([
      { path: "/apply-template", body: { model: "m", messages: chat.messages } },
      { path: "/tokenize", body: { model: "m", add_special: true } },
    ]);
    expect(tokenizeRequests("llamacpp", "m", { kind: "prompt", prompt: "p" })).toEqual([
      { path: "/tokenize", body: { model: "m", content: "p", add_special: true } },
    ]);
    expect(tokenizeRequests("sglang", "m", chat)).toBeUndefined();
    expect(tokenizeRequests("sglang", "m", { kind: "prompt", prompt: "p" })).toEqual([
      { path: "/tokenize", body: { model: "m", prompt: "p" } },
    ]);
    expect(tokenizeRequests("ollama", "m", chat)).toBeUndefined();
  });

  it("keys differ by endpoint, model and prompt", () => {
    const k = tokenizeKey("http://a", "m", chat);
    expect(tokenizeKey("http://a", "m", chat)).toBe(k);
    expect(tokenizeKey("http://b", "m", chat)).not.toBe(k);
    expect(tokenizeKey("http://a", "n", chat)).not.toBe(k);
    expect(tokenizeKey("http://a", "m", { kind: "prompt", prompt: "hi" })).not.toBe(k);
  });
});

describe("the count cache", () => {
  it("computes once while held, forgets when the last holder lets go, and stays bounded", async () => {
    const cache = new TokenCountCache(2);
    let asked = 0;
    const compute = async (): Promise<ExactCount> => ({ tokens: ++asked });
    const a = cache.hold("k", compute);
    const b = cache.hold("k", compute);
    expect(await a.count).toEqual({ tokens: 1 });
    expect(await b.count).toEqual({ tokens: 1 });
    a.release();
    a.release(); // twice is once
    expect(cache.size).toBe(1);
    b.release();
    expect(cache.size).toBe(0);
    expect(await cache.hold("k", compute).count).toEqual({ tokens: 2 });
    cache.hold("k2", compute);
    // Full: a third prompt is counted without being kept.
    const c = cache.hold("k3", compute);
    expect(await c.count).toEqual({ tokens: 4 });
    expect(cache.size).toBe(2);
    c.release();
    expect(cache.size).toBe(2);
  });
});
