// When readers need a newer probe time although nothing else changed (docs/rules/binding.md
// §8, docs/rules/state.md §2.2): a suspect mark not yet outlived by the published probe, a
// residency overlay of an unlisted model not yet outlived, a fixed engine's ticket claimed
// after the probe; and the callback built on a read of the marks, sharing one read.
import { describe, expect, it } from "vitest";
import type { ProviderState, Residency, Ticket } from "../core/index.js";
import { newerProbeNeeded, publishNeededFrom, type ReaderMarks } from "./reader-marks.js";

const PROBED = Date.parse("2026-06-11T00:00:10Z");

const last: ProviderState = {
  name: "gpu",
  endpoint: "http://gpu:11434",
  maxParallel: 1,
  activeCount: 0,
  queueDepth: 0,
  loadedModels: ["qwen3:8b"],
  ready: true,
  lastProbedAt: "2026-06-11T00:00:10Z",
  totalVramMiB: 24563,
  loadedModelFootprintsMiB: { "qwen3:8b": 5200 },
  availableModelFootprintsMiB: { "qwen3:14b": 9000 },
  contextLength: 4096,
  loadedModelContextLengths: {},
};

const vllm: ProviderState = { ...last, engine: "vllm", availableModelFootprintsMiB: {} };

const none: ReaderMarks = { tickets: [], residencies: [], suspects: new Map() };

const overlay = (modelName: string, writtenAt: number | undefined, provider = "gpu"): Residency => ({
  provider,
  modelName,
  modelFootprintMiB: 9000,
  ...(writtenAt !== undefined ? { writtenAt } : {}),
});

const ticket = (claimedAtMs: number, provider = "gpu"): Ticket => ({
  ticketId: `t${claimedAtMs}`,
  provider,
  modelFootprintMiB: 5200,
  kvCacheFootprintMiB: 100,
  holderId: "crew/a@1",
  claimedAt: new Date(claimedAtMs).toISOString(),
  modelName: "qwen3:8b",
  evicts: {},
});

describe("newerProbeNeeded", () => {
  it("is false with no marks", () => {
    expect(newerProbeNeeded(last, none)).toBe(false);
    expect(newerProbeNeeded(vllm, none)).toBe(false);
  });

  it("a suspect mark at or after the published probe time, on a ready provider", () => {
    const suspect = (since: number, state = last, name = "gpu") =>
      newerProbeNeeded(state, { ...none, suspects: new Map([[name, since]]) });
    expect(suspect(PROBED + 500)).toBe(true);
    // lastProbedAt has whole seconds: a mark in the same second is not outlived by it.
    expect(suspect(PROBED)).toBe(true);
    expect(suspect(PROBED - 1)).toBe(false);
    expect(suspect(PROBED + 500, last, "gpu-2")).toBe(false);
    // Not ready already keeps planners off it; a newer probe time would not let them back.
    expect(suspect(PROBED + 500, { ...last, ready: false })).toBe(false);
  });

  it("a residency overlay of a model the state does not list, until a probe outlives it", () => {
    const with_ = (r: Residency) => newerProbeNeeded(last, { ...none, residencies: [r] });
    expect(with_(overlay("qwen3:14b", PROBED - 200))).toBe(true);
    expect(with_(overlay("qwen3:14b", PROBED - 5_000))).toBe(false);
    // Listed: it counts whatever the probe time; an overlay without writtenAt never expires.
    expect(with_(overlay("qwen3:8b", PROBED - 200))).toBe(false);
    expect(with_(overlay("qwen3:14b", undefined))).toBe(false);
    expect(with_(overlay("qwen3:14b", PROBED - 200, "gpu-2"))).toBe(false);
  });

  it("a fixed engine's ticket claimed after the probe (fixedLoad counts it on top)", () => {
    const with_ = (state: ProviderState, t: Ticket) => newerProbeNeeded(state, { ...none, tickets: [t] });
    expect(with_(vllm, ticket(PROBED + 1_000))).toBe(true);
    expect(with_(vllm, ticket(PROBED - 1_000))).toBe(false);
    expect(with_(vllm, ticket(PROBED + 1_000, "gpu-2"))).toBe(false);
    // On Ollama the probe time does not change how a ticket counts.
    expect(with_(last, ticket(PROBED + 1_000))).toBe(false);
  });

  it("an unreadable probe time: any newer one settles more", () => {
    expect(newerProbeNeeded({ ...last, lastProbedAt: "" }, none)).toBe(true);
  });
});

describe("publishNeededFrom", () => {
  it("shares one read among asks within shareMs, and reads again after", async () => {
    let clock = 0;
    let reads = 0;
    const marks: ReaderMarks = { ...none, suspects: new Map([["gpu", PROBED + 500]]) };
    const needed = publishNeededFrom(
      async () => {
        reads++;
        return marks;
      },
      { shareMs: 200, clock: () => clock },
    );
    expect(await needed(last)).toBe(true);
    clock = 150;
    expect(await needed({ ...last, name: "gpu-2" })).toBe(false);
    expect(reads).toBe(1);
    clock = 400;
    await needed(last);
    expect(reads).toBe(2);
  });

  it("does not keep a failed read", async () => {
    let fail = true;
    const needed = publishNeededFrom(
      async () => {
        if (fail) throw new Error("state unavailable");
        return none;
      },
      { clock: () => 0 },
    );
    await expect(needed(last)).rejects.toThrow("state unavailable");
    fail = false;
    expect(await needed(last)).toBe(false);
  });
});
