// Catalog capabilities: embedding models known by name, flags that declare them, defaults by family.
import { describe, expect, it } from "vitest";
import { footprintMiB, parseModelFlag, resolveModel, slotsFor } from "./catalog.js";

describe("model capabilities", () => {
  it("knows the library's embedding models by name", () => {
    const nomic = resolveModel({ name: "nomic-embed-text", onDiskMiB: 262 });
    expect(nomic).toMatchObject({
      name: "nomic-embed-text:latest",
      capabilities: ["embedding"],
      embeddingLength: 768,
      contextLength: 2048,
      family: "nomic-bert",
      parameterSize: "137M",
      quantization: "F16",
    });
    expect(resolveModel({ name: "mxbai-embed-large:335m", onDiskMiB: 639 })).toMatchObject({
      embeddingLength: 1024,
      contextLength: 512,
    });
    expect(resolveModel({ name: "all-minilm", onDiskMiB: 44 }).embeddingLength).toBe(384);
  });

  it("an embedding model takes one slot whatever num_parallel says", () => {
    const e = resolveModel({ name: "all-minilm", onDiskMiB: 44 });
    const c = resolveModel({ name: "qwen3:8b", onDiskMiB: 4863 });
    expect(slotsFor(e, 4)).toBe(1);
    expect(slotsFor(c, 4)).toBe(4);
    expect(footprintMiB(e, 512, slotsFor(e, 4))).toBe(44 + Math.ceil(512 * e.kvMiBPerToken));
  });

  it("chat models: tools and thinking by family", () => {
    expect(resolveModel({ name: "qwen3:8b", onDiskMiB: 4863 }).capabilities).toEqual([
      "completion",
      "tools",
      "thinking",
    ]);
    expect(resolveModel({ name: "llama3.1:8b", onDiskMiB: 4700 }).capabilities).toEqual([
      "completion",
      "tools",
    ]);
    expect(resolveModel({ name: "gemma3:4b", onDiskMiB: 3300 }).capabilities).toEqual(["completion"]);
    expect(resolveModel({ name: "qwen3:8b", onDiskMiB: 1 }).embeddingLength).toBeUndefined();
  });

  it("--model keys dims and caps declare any model", () => {
    const cfg = parseModelFlag("my-embedder:v1=300,dims=512,context=1024");
    expect(resolveModel(cfg)).toMatchObject({
      capabilities: ["embedding"],
      embeddingLength: 512,
      contextLength: 1024,
    });
    const chat = resolveModel(parseModelFlag("custom:7b=4000,caps=completion+thinking"));
    expect(chat.capabilities).toEqual(["completion", "thinking"]);
    expect(() => resolveModel(parseModelFlag("x:1b=100,caps=completion+flying"))).toThrow(/capabilities/);
  });

  it("--model key pps gives a model its own prompt rate, which must be positive", () => {
    expect(resolveModel(parseModelFlag("nomic-embed-text=262,pps=20000")).promptTokensPerS).toBe(20_000);
    expect(resolveModel(parseModelFlag("qwen3:8b=4863")).promptTokensPerS).toBeUndefined();
    expect(() => resolveModel(parseModelFlag("qwen3:8b=4863,pps=-1"))).toThrow(/promptTokensPerS/);
  });
});
