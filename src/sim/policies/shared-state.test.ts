// The simulated shared state as the schedulers use it: claims are the state layer's (room,
// victims, slots), and the capacity watch wakes a waiter on a delivered change or at its deadline.
import { describe, expect, it } from "vitest";
import { providerState } from "../../../test/helpers/state-fixtures.js";
import { EventLoop } from "../events.js";
import { EPOCH_MS } from "../types.js";
import { SharedStateModel } from "./shared-state.js";

function world() {
  const loop = new EventLoop();
  const state = new SharedStateModel(loop, 600_000);
  // 24563 MiB total: 22106 usable after the 10 % reserve; a 12224 MiB model is resident.
  state.publish(
    providerState("gpu", {
      totalVramMiB: 24563,
      loadedModelFootprintsMiB: { "qwen3:14b": 12224 },
      lastProbedAt: new Date(EPOCH_MS).toISOString(),
    }),
    ["gpu"],
    false,
  );
  state.deliverChanges();
  return { loop, state, a: state.storeFor("crew/a"), b: state.storeFor("crew/b") };
}

describe("the simulated shared state", () => {
  it("grants a cold load that fits once, and refuses the next one that would overcommit", async () => {
    const { a, b } = world();
    const first = await a.tickets.claim({ provider: "gpu", model: "qwen3:8b", modelFootprintMiB: 5979 });
    expect(first).toMatchObject({ ok: true, coldLoad: true });
    const second = await b.tickets.claim({ provider: "gpu", model: "qwen3:4b", modelFootprintMiB: 5000 });
    expect(second).toMatchObject({ ok: false, reason: "no-room" });
    expect((await a.tickets.everything()).tickets.map((t) => t.holderId)).toEqual(["crew/a"]);
  });

  it("refuses a warm claim when the copy's slots are held, and a plan whose victim is busy", async () => {
    const { a, b } = world();
    const warm = { provider: "gpu", model: "qwen3:14b", modelFootprintMiB: 12224, slots: 1 };
    expect(await a.tickets.claim(warm)).toMatchObject({ ok: true, coldLoad: false });
    expect(await b.tickets.claim(warm)).toMatchObject({ ok: false, reason: "no-slot" });
    const evicting = {
      provider: "gpu",
      model: "qwen3:32b",
      modelFootprintMiB: 20000,
      evicts: { "qwen3:14b": 12224 },
    };
    expect(await b.tickets.claim(evicting)).toMatchObject({ ok: false, reason: "victim-busy" });
  });

  it("wakes a waiter when a change is delivered, not before", async () => {
    const { a, b, state } = world();
    const since = a.capacity.counter;
    let woke: string | undefined;
    void a.capacity.awaitChange(since, EPOCH_MS + 60_000).then((r) => {
      woke = r.kind;
    });
    await b.tickets.claim({ provider: "gpu", model: "qwen3:8b", modelFootprintMiB: 5979 });
    await Promise.resolve();
    expect(woke).toBeUndefined();
    expect(state.deliverChanges()).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(woke).toBe("changed");
    expect(state.deliverChanges()).toBe(false);
  });

  it("ends a wait at its deadline, in virtual time", async () => {
    const { a, loop } = world();
    const waited = a.capacity.awaitChange(a.capacity.counter, EPOCH_MS + 90_000);
    await loop.run();
    expect(await waited).toMatchObject({ kind: "deadline" });
    expect(loop.now).toBeGreaterThanOrEqual(90_000);
  });
});
