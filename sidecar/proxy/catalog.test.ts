import { describe, expect, it } from "vitest";
import { publishedSpellings } from "./catalog.js";

describe("publishedSpellings", () => {
  it("maps Ollama's reading of a name to the spelling an engine publishes", () => {
    const m = publishedSpellings(["qwen3:8b", "tiny", "Qwen/Qwen3-8B", "llama3:latest"]);
    expect(Object.fromEntries(m)).toEqual({ "tiny:latest": "tiny", "Qwen/Qwen3-8B:latest": "Qwen/Qwen3-8B" });
  });

  it("keeps Ollama's reading where both spellings are published", () => {
    expect(publishedSpellings(["tiny", "tiny:latest"]).size).toBe(0);
  });
});
