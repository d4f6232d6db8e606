import { describe, expect, it } from "vitest";
import { model, phaseContext, provider } from "../../test/binding/fixtures.js";
import { runFilters } from "./filter.js";
import type { Model, ModelProvider } from "./types.js";

function reason(m: Model, p: ModelProvider | undefined, ctx = phaseContext({})): string {
  const s = runFilters(ctx, { model: m, provider: p });
  return s.ok ? "ok" : s.reason;
}

describe("filter: VRAM headroom vramMib + evictionOverhead ≤ vramTotalMiB", () => {
  it.each<[string, number | undefined, number | undefined, number, string]>([
    ["fits", 20480, 32605, 0, "ok"],
    ["equality fits", 24563, 24563, 0, "ok"],
    ["one over does not", 24564, 24563, 0, "insufficient VRAM"],
    ["overhead counts", 24000, 24563, 564, "insufficient VRAM"],
    ["overhead equality fits", 24000, 24563, 563, "ok"],
    ["undeclared vramMib fits", undefined, 1024, 0, "ok"],
    ["unknown total fits", 99999, undefined, 0, "ok"],
    ["declared zero fits an unknown total", 0, undefined, 0, "ok"],
  ])("%s", (_name, vramMib, total, overhead, want) => {
    const m = model("m", { ...(vramMib !== undefined ? { vramMib } : {}) });
    const p = provider("gpu-a", { ...(total !== undefined ? { vramTotalMiB: total } : {}) });
    const got = reason(m, p, phaseContext({ evictionOverheadMiB: overhead }));
    expect(got).toBe(want);
  });

  it("spec.scheduling.memoryMiB stands in when no probe reports VRAM", () => {
    const m = model("m", { vramMib: 9000 });
    expect(reason(m, provider("gpu-a", { memoryMiB: 8192 }))).toBe("insufficient VRAM");
    expect(reason(m, provider("gpu-a", { memoryMiB: 8192, vramTotalMiB: 24563 }))).toBe("ok");
  });
});

describe("filter: parallelism agentCount + 1 ≤ maxParallel · concurrencyFactor", () => {
  it.each<[string, number | undefined, number | undefined, number, string]>([
    ["room", 1, 3, 8, "ok"],
    ["equality fits (7 + 1 ≤ 1·8)", 1, 7, 8, "ok"],
    ["full (8 + 1 > 1·8)", 1, 8, 8, "no parallel headroom"],
    ["more slots", 2, 15, 8, "ok"],
    ["factor 1", 2, 2, 1, "no parallel headroom"],
    ["factor 0 turns the check off", 1, 1000, 0, "ok"],
    ["unknown slots: no check", undefined, 1000, 8, "ok"],
    ["unknown agentCount is 0", 1, undefined, 1, "ok"],
  ])("%s", (_name, maxParallel, agentCount, factor, want) => {
    const p = provider("gpu-a", {
      ...(maxParallel !== undefined ? { maxParallel } : {}),
      ...(agentCount !== undefined ? { agentCount } : {}),
    });
    expect(reason(model("m"), p, phaseContext({ concurrencyFactor: factor }))).toBe(want);
  });
});

describe("filter: readiness, resolution and require, first failure wins", () => {
  it.each<[string, Model, ModelProvider | undefined, string]>([
    ["all good", model("m"), provider("gpu-a"), "ok"],
    ["Model not ready", model("m", { ready: false }), provider("gpu-a"), "Model not ready"],
    ["provider missing", model("m"), undefined, "provider not found"],
    ["provider not ready", model("m"), provider("gpu-a", { ready: false }), "provider not ready"],
    [
      "not ready beats insufficient VRAM",
      model("m", { ready: false, vramMib: 10 }),
      provider("gpu-a", { vramTotalMiB: 1 }),
      "Model not ready",
    ],
  ])("%s", (_name, m, p, want) => {
    expect(reason(m, p)).toBe(want);
  });

  it("require is checked first", () => {
    const ctx = phaseContext({ rule: { require: { matchLabels: { family: "qwen3" } } } });
    expect(reason(model("m", { ready: false }), undefined, ctx)).toBe("Model does not match require");
    expect(reason(model("m", { labels: { family: "qwen3" } }), provider("gpu-a"), ctx)).toBe("ok");
  });

  it("an invalid require admits nothing", () => {
    const ctx = phaseContext({ rule: { require: { matchExpressions: [{ key: "x", operator: "Bad" }] } } });
    expect(reason(model("m"), provider("gpu-a"), ctx)).toBe("invalid require selector");
  });
});

describe("filter: embedding models only for a require that names the capability", () => {
  const embed = model("nomic", { labels: { "capability/embedding": "true", family: "nomic-bert" } });
  const chat = model("qwen", { labels: { family: "qwen3" } });
  const p = provider("gpu-a");

  it("an empty require admits chat models, not embedding ones", () => {
    expect(reason(chat, p)).toBe("ok");
    expect(reason(embed, p)).toBe("Model does not match require");
  });

  it("a require on other labels does not admit an embedding model that matches them", () => {
    const ctx = phaseContext({ rule: { require: { matchLabels: { family: "nomic-bert" } } } });
    expect(reason(embed, p, ctx)).toBe("Model does not match require");
  });

  it("a require naming capability/embedding admits it (and only what matches)", () => {
    const ctx = phaseContext({ rule: { require: { matchLabels: { "capability/embedding": "true" } } } });
    expect(reason(embed, p, ctx)).toBe("ok");
    expect(reason(chat, p, ctx)).toBe("Model does not match require");
  });
});
