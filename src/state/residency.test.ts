// Residency overlays written again for the same residency (tickets.ts writeResidency).
import { afterEach, describe, expect, it } from "vitest";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { MemoryKvStore } from "./memory-kv.js";
import { openStateStore, type StateStore } from "./store.js";

let store: StateStore | undefined;
afterEach(async () => {
  await store?.close();
});

async function setup(): Promise<{ store: StateStore }> {
  store = await openStateStore(new MemoryKvStore());
  return { store };
}

describe("residency overlays written again", () => {
  it("keep when the model became resident and its load time; a new footprint starts afresh", async () => {
    const { store } = await setup();
    await store.providerWriter.publish(providerState("rig", { totalVramMiB: 24563, lastProbedAt: "" }));
    const read = async () => (await store.tickets.residencies("rig"))[0];
    await store.tickets.writeResidency({
      provider: "rig",
      modelName: "m",
      modelFootprintMiB: 3000,
      writtenAt: 5,
    });
    // A call that converged on the same load, which measured it: the load time joins.
    await store.tickets.writeResidency({
      provider: "rig",
      modelName: "m",
      modelFootprintMiB: 3000,
      writtenAt: 9,
      loadMs: 800,
    });
    expect(await read()).toMatchObject({ writtenAt: 5, loadMs: 800 });
    // Another that did not measure it changes nothing.
    await store.tickets.writeResidency({
      provider: "rig",
      modelName: "m",
      modelFootprintMiB: 3000,
      writtenAt: 12,
    });
    expect(await read()).toMatchObject({ writtenAt: 5, loadMs: 800 });
    // The engine's measured footprint refines the estimate: the same residency.
    await store.tickets.writeResidency({
      provider: "rig",
      modelName: "m",
      modelFootprintMiB: 3500,
      writtenAt: 20,
    });
    expect(await read()).toEqual({
      provider: "rig",
      modelName: "m",
      modelFootprintMiB: 3500,
      writtenAt: 5,
      loadMs: 800,
    });
    // A probe after the overlay no longer lists the model: it was unloaded, and a new load is
    // a new residency.
    await store.providerWriter.publish(
      providerState("rig", { totalVramMiB: 24563, lastProbedAt: new Date(60_000).toISOString() }),
    );
    await store.tickets.writeResidency({
      provider: "rig",
      modelName: "m",
      modelFootprintMiB: 3500,
      writtenAt: 70_000,
    });
    expect(await read()).toEqual({
      provider: "rig",
      modelName: "m",
      modelFootprintMiB: 3500,
      writtenAt: 70_000,
    });
  });
});
