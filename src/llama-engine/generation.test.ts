import type { Token } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { lastTokens } from "./generation.js";

/** node-llama-cpp brands its token ids; plain numbers stand in for them here. */
const tokens = (ids: number[]): Token[] => ids as unknown as Token[];

describe("lastTokens", () => {
  it("is the tail of the prompt and what followed it, whatever the split", () => {
    const prompt = tokens([1, 2, 3, 4, 5]);
    for (const ids of [[], [6], [6, 7, 8], [6, 7, 8, 9, 10, 11, 12]]) {
      const generated = tokens(ids);
      const all = [...prompt, ...generated];
      for (const n of [1, 2, 4, 6, 64]) expect(lastTokens(prompt, generated, n)).toEqual(all.slice(-n));
      expect(lastTokens(prompt, generated, -1)).toEqual(all);
    }
  });
});
