import { describe, expect, it } from "vitest";
import { model, provider } from "../../test/binding/fixtures.js";
import { compareScored, HYSTERESIS_POINTS, pickWithHysteresis, rank } from "./rank.js";
import type { ScoredPair } from "./score.js";

function scored(
  name: string,
  score: number,
  o: { vramMib?: number; provider?: string; id?: string } = {},
): ScoredPair {
  return {
    model: model(name, {
      ...(o.vramMib !== undefined ? { vramMib: o.vramMib } : {}),
      ...(o.id ? { id: o.id } : {}),
    }),
    provider: provider(o.provider ?? "gpu-a"),
    score,
    terms: {},
  };
}

describe("tie-breaks: score, then smaller declared vramMib (undeclared after), then name", () => {
  it.each<[string, ScoredPair[], string[]]>([
    ["higher score first", [scored("a", 10), scored("b", 20)], ["b", "a"]],
    ["score beats vram", [scored("a", 10, { vramMib: 1 }), scored("b", 11, { vramMib: 99 })], ["b", "a"]],
    [
      "smaller vram first",
      [scored("a", 10, { vramMib: 9216 }), scored("b", 10, { vramMib: 5120 })],
      ["b", "a"],
    ],
    ["declared before undeclared", [scored("a", 10), scored("z", 10, { vramMib: 99999 })], ["z", "a"]],
    ["declared 0 is declared", [scored("a", 10), scored("b", 10, { vramMib: 0 })], ["b", "a"]],
    ["then name", [scored("b", 10, { vramMib: 5 }), scored("a", 10, { vramMib: 5 })], ["a", "b"]],
    ["undeclared by name", [scored("b", 10), scored("a", 10)], ["a", "b"]],
    [
      "all together",
      [scored("d", 5), scored("c", 10), scored("b", 10, { vramMib: 8 }), scored("a", 10, { vramMib: 9 })],
      ["b", "a", "c", "d"],
    ],
  ])("%s", (_name, pairs, want) => {
    expect(rank(pairs).map((p) => p.model.name)).toEqual(want);
    expect(rank([...pairs].reverse()).map((p) => p.model.name)).toEqual(want);
  });

  it("is a total order on distinct names", () => {
    const a = scored("a", 1);
    expect(compareScored(a, a)).toBe(0);
  });
});

describe("hysteresis: keep the current provider unless beaten by more than 25", () => {
  it("uses 25 points", () => {
    expect(HYSTERESIS_POINTS).toBe(25);
  });

  it.each<[string, number, string]>([
    ["beaten by exactly 25: keeps", 25, "gpu-a"],
    ["beaten by 26: moves", 26, "gpu-b"],
    ["beaten by 1: keeps", 1, "gpu-a"],
    ["incumbent is the best: keeps", 0, "gpu-a"],
  ])("%s", (_name, margin, want) => {
    const ranked = rank([
      scored("m-b", 100 + margin, { provider: "gpu-b" }),
      scored("m-a", 100, { provider: "gpu-a" }),
    ]);
    const pick = pickWithHysteresis(ranked, { provider: "gpu-a", modelRef: "m-a" });
    expect(pick?.provider.name).toBe(want);
  });

  it("no current binding: the best", () => {
    const ranked = rank([scored("x", 1, { provider: "gpu-a" }), scored("y", 2, { provider: "gpu-b" })]);
    expect(pickWithHysteresis(ranked, undefined)?.model.name).toBe("y");
  });

  it("current provider no longer feasible: the best", () => {
    const ranked = rank([scored("y", 2, { provider: "gpu-b" })]);
    expect(pickWithHysteresis(ranked, { provider: "gpu-a" })?.model.name).toBe("y");
  });

  it("current model gone: the best pair on the current provider is the incumbent", () => {
    const ranked = rank([
      scored("y", 120, { provider: "gpu-b" }),
      scored("a1", 100, { provider: "gpu-a" }),
      scored("a2", 90, { provider: "gpu-a" }),
    ]);
    expect(pickWithHysteresis(ranked, { provider: "gpu-a", modelRef: "gone" })?.model.name).toBe("a1");
  });

  it("the incumbent is the current model even when another on its provider scores higher", () => {
    const ranked = rank([
      scored("a1", 110, { provider: "gpu-a" }),
      scored("a2", 100, { provider: "gpu-a" }),
      scored("b", 105, { provider: "gpu-b" }),
    ]);
    // the best (a1) beats the incumbent a2 by 10 ≤ 25: a2 stays
    expect(pickWithHysteresis(ranked, { provider: "gpu-a", modelRef: "a2" })?.model.name).toBe("a2");
  });

  it("matches the current model by id when the status has no modelRef", () => {
    const ranked = rank([
      scored("a1", 110, { provider: "gpu-a", id: "qwen3:14b" }),
      scored("a2", 100, { provider: "gpu-a", id: "qwen3:8b" }),
    ]);
    expect(pickWithHysteresis(ranked, { provider: "gpu-a", model: "qwen3:8b" })?.model.name).toBe("a2");
  });
});
