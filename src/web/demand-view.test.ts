// The demand panel's data (docs/web-view.md "Demand"): per model what core's demand aggregate
// says (waiters, intents, decayed use, the selection forecast), per crew the calls waiting by
// band (from the fair-share queue, else from the waiters' namespaces), refusals by count.
import { describe, expect, it } from "vitest";
import { T0 } from "../../test/helpers/core-fixtures.js";
import type {
  Band,
  DemandEntry,
  IntentEntry,
  QueueEntry,
  SelEntry,
  UseEntry,
  WaitEntry,
} from "../core/index.js";
import { demandView } from "./demand-view.js";

const LIVE = T0 + 60_000;
const wait = (model: string, agent: string, expiresAt = LIVE): WaitEntry => ({
  kind: "wait",
  model,
  agent,
  expiresAt,
});
const intent = (model: string, agent: string, thread: string): IntentEntry => ({
  kind: "intent",
  model,
  agent,
  thread,
  expiresAt: LIVE,
});
const use = (model: string, rate: number): UseEntry => ({
  kind: "use",
  model,
  agent: "team-a/planner",
  rate,
  updatedAt: T0,
  lastUsedAt: T0,
  expiresAt: LIVE,
});
const sel = (rate: number, models: string[]): SelEntry => ({
  kind: "sel",
  rate,
  updatedAt: T0,
  expiresAt: LIVE,
  models,
});
let n = 0;
const queue = (model: string, crew: string, band: Band, expiresAt = LIVE): QueueEntry => ({
  kind: "queue",
  id: `call-${++n}`,
  model,
  crew,
  band,
  weight: 1,
  since: T0 - 1000,
  expiresAt,
});

const NONE = new Map<string, number>();

describe("demandView", () => {
  it("lists models by waiters, with intents, decayed use and forecast", () => {
    const entries: DemandEntry[] = [
      wait("qwen3:14b", "team-a/planner"),
      wait("qwen3:14b", "team-b/coder"),
      wait("qwen3:14b", "team-b/coder"),
      wait("qwen3:8b", "team-a/critic"),
      wait("qwen3:8b", "team-c/old", T0),
      intent("qwen3:8b", "team-a/critic", "th-1"),
      intent("qwen3:8b", "team-b/coder", "th-2"),
      use("qwen3:8b", 4),
      use("gemma3:4b", 1.234),
      use("llama3:8b", 0.001),
      sel(2.5, ["qwen3:32b", "qwen3:8b"]),
    ];
    const v = demandView(entries, T0, NONE);
    expect(v.models).toEqual([
      { model: "qwen3:14b", waiting: 2, intents: 0, recentUse: 0, forecast: 0 },
      { model: "qwen3:8b", waiting: 1, intents: 2, recentUse: 4, forecast: 2.5 },
      { model: "gemma3:4b", waiting: 0, intents: 0, recentUse: 1.23, forecast: 0 },
      { model: "qwen3:32b", waiting: 0, intents: 0, recentUse: 0, forecast: 2.5 },
    ]);
  });

  it("breaks equal waiters by recent use, then by name", () => {
    const v = demandView(
      [wait("b", "x/1"), wait("a", "x/1"), wait("c", "x/1"), use("c", 3), use("b", 1), use("a", 1)],
      T0,
      NONE,
    );
    expect(v.models.map((m) => m.model)).toEqual(["c", "a", "b"]);
  });

  it("counts crews' waiting calls by band from the queue entries", () => {
    const entries: DemandEntry[] = [
      queue("qwen3:14b", "team-a", "interactive"),
      queue("qwen3:8b", "team-a", "interactive"),
      queue("qwen3:14b", "team-a", "standard"),
      queue("qwen3:14b", "team-b", "batch"),
      queue("qwen3:14b", "team-c", "batch", T0),
      // With queue entries, waiters' namespaces are not counted again.
      wait("qwen3:14b", "team-z/agent"),
    ];
    expect(demandView(entries, T0, NONE).crews).toEqual([
      { crew: "team-a", waiting: 3, bands: { interactive: 2, standard: 1 } },
      { crew: "team-b", waiting: 1, bands: { batch: 1 } },
    ]);
  });

  it("counts crews from the waiters' namespaces when fair share keeps no queue", () => {
    const entries: DemandEntry[] = [
      wait("qwen3:14b", "team-b/coder"),
      wait("qwen3:8b", "team-a/planner"),
      wait("qwen3:14b", "team-a/critic"),
      wait("qwen3:14b", "team-c/old", T0),
      // A call that named no agent (the sidecar's own) is counted under "_".
      wait("qwen3:14b", ""),
      queue("qwen3:14b", "team-q", "batch", T0),
    ];
    expect(demandView(entries, T0, NONE).crews).toEqual([
      { crew: "team-a", waiting: 2, bands: { standard: 2 } },
      { crew: "_", waiting: 1, bands: { standard: 1 } },
      { crew: "team-b", waiting: 1, bands: { standard: 1 } },
    ]);
  });

  it("lists refusals by count, rounded", () => {
    const refusals = new Map([
      ["gpu-busy", 2.6],
      ["model-too-large", 7],
      ["prompt-too-large", 3],
      ["model-unknown", 1],
    ]);
    expect(demandView([], T0, refusals)).toEqual({
      models: [],
      crews: [],
      refusals: [
        { reason: "model-too-large", count: 7 },
        { reason: "gpu-busy", count: 3 },
        { reason: "prompt-too-large", count: 3 },
        { reason: "model-unknown", count: 1 },
      ],
    });
  });
});
