// A conversation's next turn placed while its previous turn is still in flight (docs/rules/
// placement.md §5.5): a client that sends the next turn on the answer's last byte reaches the
// sidecar before the proxy's Release of the previous one has recorded it. On a real Scheduler
// over the in-memory store, two cards with the model warm: the next turn is priced on the copy
// the turn in flight runs on, as it would be after that turn's Release.
import { afterEach, expect, it } from "vitest";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { MemoryKvStore, openStateStore, type StateStore } from "../state/index.js";
import { schedulerConfigFromEnv } from "./config.js";
import { type PlaceInput, Scheduler } from "./scheduler.js";

let store: StateStore | undefined;
let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.close();
  await store?.close();
});

const turn = (promptChars: number): PlaceInput => ({
  agent: "team/a",
  threadId: "",
  phase: "mulling",
  candidates: [{ model: "qwen3:8b", score: 100 }],
  promptTokens: 0,
  promptChars,
  maxOutputTokens: 0,
  cannotWait: false,
  conversation: { id: "conv-1", promptChars },
});

async function setup(): Promise<Scheduler> {
  store = await openStateStore(new MemoryKvStore(), { holderId: "test" });
  for (const name of ["gpu-a", "gpu-b"])
    await store.providerWriter.publish(
      providerState(name, {
        endpoint: `http://127.0.0.1:9/${name}`,
        maxParallel: 4,
        loadedModelFootprintsMiB: { "qwen3:8b": 4863 },
        availableModelFootprintsMiB: { "qwen3:8b": 4863 },
      }),
    );
  scheduler = new Scheduler({
    state: store,
    config: schedulerConfigFromEnv({ KUBEMOOT_NAMESPACE: "team", KUBEMOOT_AGENT_NAME: "a" }),
    ops: { unload: async () => {}, load: async () => {} },
  });
  return scheduler;
}

it("prices the next turn on the copy its previous turn is running on, before that turn's Release", async () => {
  const s = await setup();
  const first = await s.place(turn(40_000));
  expect(first.kind).toBe("placed");
  if (first.kind !== "placed") return;
  expect(first.placement.expectedCachedTokens).toBe(0);
  // The answer's last byte went out; its Release has not been processed yet.
  const next = await s.place(turn(42_000));
  expect(next.kind).toBe("placed");
  if (next.kind !== "placed") return;
  expect(next.placement.provider).toBe(first.placement.provider);
  expect(next.placement.expectedCachedTokens).toBe(s.estimatePromptTokens(0, 40_000));
  // Once released, the turn is in the table: the same answer from there.
  await s.release({
    ticketId: first.placement.ticketId,
    latencyMs: 10,
    promptTokens: 0,
    promptChars: 40_000,
    outputTokens: 0,
    error: "",
    outcome: "succeeded",
  });
  const third = await s.place(turn(42_000));
  expect(third.kind === "placed" && third.placement.expectedCachedTokens).toBeGreaterThan(0);
});
