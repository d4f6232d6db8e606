import { describe, expect, it } from "vitest";
import { agent, model, phaseContext, provider, qwen } from "../../test/binding/fixtures.js";
import { freeFraction, residentMiB } from "./capacity.js";
import {
  capacity,
  imageLocality,
  load,
  phaseProviderWeight,
  prefer,
  qualityBias,
  scorePair,
} from "./score.js";

describe("score: prefer", () => {
  it("sums the weights of every matching term", () => {
    const ctx = phaseContext({
      rule: {
        prefer: [
          { weight: 100, selector: { matchLabels: { family: "qwen3", params: "32B" } } },
          { weight: 50, selector: { matchLabels: { family: "qwen3" } } },
          { weight: 7, selector: { matchLabels: { family: "llama" } } },
        ],
      },
    });
    const pair = { model: model("m", { labels: qwen("32B", "high") }), provider: provider("gpu-a") };
    expect(prefer.score(ctx, pair)).toBe(150);
  });
});

describe("score: quality bias applies only without a prefer block", () => {
  const m = model("m", { labels: qwen("32B", "high") });
  const pair = { model: m, provider: provider("gpu-a") };
  it.each<[string, Parameters<typeof phaseContext>[0], number]>([
    ["no prefer, bias 0.7 → high 70", { bias: 0.7 }, 70],
    ["no bias → 0", {}, 0],
    ["prefer block present → 0", { bias: 0.7, rule: { prefer: [{ weight: 1, selector: {} }] } }, 0],
    ["empty prefer block is no block", { bias: 0.7, rule: { prefer: [] } }, 70],
  ])("%s", (_name, o, want) => {
    expect(qualityBias.score(phaseContext(o), pair)).toBe(want);
  });
});

describe("score: image locality +10", () => {
  it.each<[[string, number][] | undefined, number]>([
    [[["qwen3:32b", 20000]], 10],
    [[["qwen3:8b", 5000]], 0],
    [undefined, 0],
  ])("loaded %j → %s", (loaded, want) => {
    const pair = {
      model: model("m", { id: "qwen3:32b" }),
      provider: provider("gpu-a", { ...(loaded ? { loaded } : {}) }),
    };
    expect(imageLocality.score(phaseContext({}), pair)).toBe(want);
  });
});

describe("score: provider weight, phase-aware", () => {
  it.each<[string, number | undefined, number]>([
    ["mulling", 25, 25],
    ["triage", 25, -25],
    ["mulling", undefined, 100],
    ["triage", undefined, -100],
    ["triage", 0, 0],
    ["synthesis", 25, 0],
  ])("%s weight %s → %s", (phase, weight, want) => {
    const p = provider("gpu-a", { ...(weight !== undefined ? { weight } : {}) });
    expect(phaseProviderWeight.score(phaseContext({ phase }), { model: model("m"), provider: p })).toBe(want);
  });
});

describe("score: load −10·bound / max(1, maxParallel), integer division", () => {
  // maxParallel 2: 10·1/2 = 5, 10·2/2 = 10, 10·3/2 = 15; maxParallel 3: 10/3 = 3, 20/3 = 6
  it.each<[number | undefined, number, number]>([
    [2, 0, 0],
    [2, 1, -5],
    [2, 2, -10],
    [2, 3, -15],
    [3, 1, -3],
    [3, 2, -6],
    [1, 2, -20],
    [undefined, 1, -10],
  ])("maxParallel %s, %s bound → %s", (maxParallel, bound, want) => {
    const p = provider("gpu-a", { ...(maxParallel !== undefined ? { maxParallel } : {}) });
    const ctx = phaseContext({ bound: { "gpu-a": bound } });
    expect(load.score(ctx, { model: model("m"), provider: p })).toBe(want);
  });

  it("coordinators take no load penalty", () => {
    const ctx = phaseContext({ bound: { "gpu-a": 5 }, agent: agent("c", { role: "coordinator" }) });
    expect(load.score(ctx, { model: model("m"), provider: provider("gpu-a", { maxParallel: 2 }) })).toBe(0);
  });
});

describe("score: capacity, freeFraction = max(0, usable − resident) / usable", () => {
  // usable(32605) = 32605 − max(2048, ⌊0.12·32605⌋ = 3912) = 28693
  // usable(24563) = 24563 − max(2048, ⌊2947.56⌋ = 2947) = 21616
  it.each<[string, number | undefined, [string, number][] | undefined, number, number]>([
    // (28693 − 21504) / 28693 = 0.2506 → spread round(5.01) = 5, binpack round(14.99) = 15
    ["5090 with 21504 resident", 32605, [["qwen3:32b", 21504]], 5, 15],
    // (21616 − 6144) / 21616 = 0.7158 → round(14.32) = 14; binpack round(5.68) = 6
    ["4090 with 6144 resident", 24563, [["qwen3:8b", 6144]], 14, 6],
    ["empty card", 24563, undefined, 20, 0],
    ["over-full card clamps to 0", 24563, [["x", 30000]], 0, 20],
    // unknown total: freeFraction 0 → spread 0, binpack 20
    ["unknown VRAM", undefined, undefined, 0, 20],
  ])("%s → spread %s, binpack %s", (_name, total, loaded, spread, binpack) => {
    const p = provider("gpu-a", {
      ...(total !== undefined ? { vramTotalMiB: total } : {}),
      ...(loaded ? { loaded } : {}),
    });
    const pair = { model: model("m"), provider: p };
    expect(capacity.score(phaseContext({ strategy: "spread" }), pair)).toBe(spread);
    expect(capacity.score(phaseContext({ strategy: "binpack" }), pair)).toBe(binpack);
  });

  it("half a point rounds up: freeFraction 0.525 → 10.5 → 11", () => {
    // usable(20000) = 20000 − 2400 = 17600; resident 8360 → free 9240 / 17600 = 0.525
    const p = provider("gpu-a", { vramTotalMiB: 20000, loaded: [["x", 8360]] });
    expect(freeFraction(p)).toBeCloseTo(0.525, 12);
    expect(capacity.score(phaseContext({}), { model: model("m"), provider: p })).toBe(11);
  });

  it("vramUsedMiB stands in for resident when no footprints are listed", () => {
    expect(residentMiB(provider("gpu-a", { vramUsedMiB: 4000 }))).toBe(4000);
    expect(residentMiB(provider("gpu-a", { vramUsedMiB: 4000, loaded: [["x", 1000]] }))).toBe(1000);
  });
});

describe("scorePair sums every term", () => {
  it("prod coordinator on the 5090: 70 + 10 + 100 + 0 + 5 = 185", () => {
    const ctx = phaseContext({
      bias: 0.7,
      agent: agent("c", { role: "coordinator" }),
      bound: { "gpu-a": 3 },
    });
    const p = provider("gpu-a", { vramTotalMiB: 32605, maxParallel: 2, loaded: [["qwen3:32b", 21504]] });
    const s = scorePair(ctx, {
      model: model("qwen3-32b", { id: "qwen3:32b", labels: qwen("32B", "high") }),
      provider: p,
    });
    expect(s.terms).toEqual({
      Prefer: 0,
      QualityBias: 70,
      ImageLocality: 10,
      ProviderWeight: 100,
      Load: 0,
      Capacity: 5,
    });
    expect(s.score).toBe(185);
  });
});
