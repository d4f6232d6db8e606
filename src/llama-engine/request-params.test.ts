import { describe, expect, it } from "vitest";
import { readGenerationParams } from "./request-params.js";

describe("readGenerationParams", () => {
  it("has llama-server's defaults", () => {
    const p = readGenerationParams({});
    expect(p).toMatchObject({ nPredict: -1, stop: [], stream: false, cachePrompt: true, idSlot: -1 });
    expect(p.sampling).toMatchObject({
      temperature: 0.8,
      topK: 40,
      topP: 0.95,
      minP: 0.05,
      repeatPenalty: 1,
    });
    expect(p.sampling.seed).toBeGreaterThanOrEqual(0);
  });

  it("reads n_predict before max_completion_tokens before max_tokens, and stop as a string or list", () => {
    expect(readGenerationParams({ max_tokens: 5 }).nPredict).toBe(5);
    expect(readGenerationParams({ max_tokens: 5, max_completion_tokens: 6 }).nPredict).toBe(6);
    expect(readGenerationParams({ max_tokens: 5, n_predict: 7 }).nPredict).toBe(7);
    expect(readGenerationParams({ stop: "x" }).stop).toEqual(["x"]);
    expect(readGenerationParams({ stop: ["a", "", "b"], seed: 9 })).toMatchObject({
      stop: ["a", "b"],
      sampling: { seed: 9 },
    });
  });

  it("refuses a field of the wrong type or range, naming it", () => {
    expect(() => readGenerationParams({ temperature: "hot" })).toThrow("temperature: must be a number");
    expect(() => readGenerationParams({ max_tokens: 1.5 })).toThrow("max_tokens: must be a whole number");
    expect(() => readGenerationParams({ top_p: 2 })).toThrow("top_p: must be between 0 and 1");
    expect(() => readGenerationParams({ stop: [1] })).toThrow("stop: must be a string or a list of strings");
    expect(() => readGenerationParams({ stream: "yes" })).toThrow("stream: must be a boolean");
    expect(() => readGenerationParams({ stop: Array(17).fill("x") })).toThrow("stop: at most 16 strings");
  });
});
