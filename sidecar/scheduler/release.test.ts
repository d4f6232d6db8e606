// Release of a call that never reached the provider learns nothing: repeated, it must not open
// the provider's circuit, and it must not record the (never loaded) model as resident.
import { afterEach, beforeEach, expect, it } from "vitest";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { schedulerConfigFromEnv } from "./config.js";
import { type PlaceInput, Scheduler } from "./scheduler.js";

let store: StateStore;
let scheduler: Scheduler;

const input: PlaceInput = {
  agent: "team/a",
  threadId: "",
  phase: "mulling",
  candidates: [{ model: "qwen3:8b", score: 50 }],
  promptTokens: 100,
  promptChars: 0,
  maxOutputTokens: 0,
  cannotWait: false,
};

beforeEach(async () => {
  store = await openStateStore("memory");
  await store.providerWriter.publish({
    name: "gpu",
    endpoint: "http://127.0.0.1:9",
    maxParallel: 4,
    activeCount: 0,
    queueDepth: 0,
    loadedModels: [],
    ready: true,
    lastProbedAt: "",
    totalVramMiB: 24563,
    loadedModelFootprintsMiB: {},
    availableModelFootprintsMiB: { "qwen3:8b": 4863 },
    contextLength: 8192,
    loadedModelContextLengths: {},
  });
  scheduler = new Scheduler({
    state: store,
    config: schedulerConfigFromEnv({}),
    ops: { unload: async () => {}, load: async () => {} },
  });
});

afterEach(async () => {
  await scheduler.close();
  await store.close();
});

async function placeAndRelease(release: { success: boolean; ran?: boolean }): Promise<string> {
  const out = await scheduler.place(input);
  if (out.kind !== "placed") throw new Error(`refused: ${out.refusal.message}`);
  await scheduler.release({
    ticketId: out.placement.ticketId,
    latencyMs: 0,
    promptTokens: 0,
    promptChars: 0,
    outputTokens: 0,
    error: "",
    ...release,
  });
  return out.placement.provider;
}

it("never opens the circuit or records residency for calls that did not run", async () => {
  for (let i = 0; i < 5; i++) await placeAndRelease({ success: false, ran: false });
  expect(await placeAndRelease({ success: false, ran: false })).toBe("gpu");
  expect(await store.tickets.residencies("gpu")).toEqual([]);
});

it("opens the circuit after three failed calls that did run (the control case)", async () => {
  for (let i = 0; i < 3; i++) await placeAndRelease({ success: false });
  const out = await scheduler.place(input);
  expect(out.kind).toBe("refused");
});
