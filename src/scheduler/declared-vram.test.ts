// A configured candidate's declared VRAM (the binder's Model.spec.vramMib) sizes a model no
// provider has shown loaded: without it, the on-disk size × 1.2 is all a sidecar has
// (docs/rules/placement.md §2), which can call a model that fits too large.
import { afterEach, expect, it } from "vitest";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { openStateStore, type StateStore } from "../state/index.js";
import { schedulerConfigFromEnv } from "./config.js";
import { Scheduler } from "./scheduler.js";

let store: StateStore | undefined;
let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.close();
  await store?.close();
});

async function placeWith(candidates: unknown[]) {
  store = await openStateStore("memory", { holderId: "test" });
  // 24563 MiB total (22106 usable); on disk 19000 MiB, so × 1.2 = 22800 MiB would not fit.
  await store.providerWriter.publish(
    providerState("gpu", {
      endpoint: "http://127.0.0.1:9",
      availableModelFootprintsMiB: { "qwen3:32b": 19000 },
    }),
  );
  scheduler = new Scheduler({
    state: store,
    config: schedulerConfigFromEnv({ KUBEMOOT_MODEL_CANDIDATES_MULLING: JSON.stringify(candidates) }),
    ops: { unload: async () => {}, load: async () => {} },
  });
  const input = { agent: "team/a", threadId: "", phase: "mulling" as const, candidates: [] };
  return scheduler.place({
    ...input,
    promptTokens: 100,
    promptChars: 0,
    maxOutputTokens: 0,
    cannotWait: false,
  });
}

it("without a declaration, the on-disk estimate refuses the model as too large", async () => {
  const out = await placeWith([{ model: "qwen3:32b", score: 70 }]);
  expect(out).toMatchObject({ kind: "refused", refusal: { reason: "model-too-large" } });
});

it("with the declared vramMib, the model is placed as a cold load of that size", async () => {
  const out = await placeWith([{ model: "qwen3:32b", score: 70, vramMib: 20500 }]);
  expect(out).toMatchObject({ kind: "placed", placement: { coldLoad: true, footprintMiB: 20500 } });
});
