import { afterEach, describe, expect, it } from "vitest";
import { providerState } from "../../test/helpers/state-fixtures.js";
import { MemoryKvStore } from "./memory-kv.js";
import { openStateStore, type StateStore } from "./store.js";

const stores: StateStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

describe("capacity watch", () => {
  it("resolves on a provider-state or ticket change, at the deadline, or on abort", async () => {
    const kv = new MemoryKvStore();
    const store = await openStateStore(kv);
    stores.push(store);
    const cap = store.capacity;
    const c0 = cap.counter;
    const changed = cap.awaitChange(c0, Date.now() + 5000);
    await store.providerWriter.publish(providerState("rig1", { totalVramMiB: 16384 }));
    const r1 = await changed;
    expect(r1.kind).toBe("changed");
    expect(r1.counter).toBeGreaterThan(c0);

    const c1 = cap.counter;
    const onTicket = cap.awaitChange(c1, Date.now() + 5000);
    const t = await store.tickets.claim({ provider: "rig1", model: "m", modelFootprintMiB: 100 });
    expect((await onTicket).kind).toBe("changed");
    // The claim's ticket write counts once; its guard write does not count.
    expect(cap.counter - c1).toBe(1);
    if (t.ok) await store.tickets.release(t.ticket);

    const t0 = Date.now();
    const r2 = await cap.awaitChange(cap.counter, Date.now() + 150);
    expect(r2.kind).toBe("deadline");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);

    const ac = new AbortController();
    const aborted = cap.awaitChange(cap.counter, Date.now() + 5000, ac.signal);
    ac.abort();
    expect((await aborted).kind).toBe("aborted");
    expect((await cap.awaitChange(0, Date.now() + 5000)).kind).toBe("changed"); // already past
  });

  it("says unavailable when no watch is established, and when it is lost mid-wait", async () => {
    const kv = new MemoryKvStore();
    const store = await openStateStore(kv, { catchUpTimeoutMs: 300 });
    stores.push(store);
    const waiting = store.capacity.awaitChange(store.capacity.counter, Date.now() + 5000);
    kv.setOnline(false);
    const r = await waiting;
    expect(r.kind).toBe("unavailable");
    const again = await store.capacity.awaitChange(store.capacity.counter, Date.now() + 5000);
    expect(again.kind).toBe("unavailable");
    if (again.kind === "unavailable") expect(again.reason).toMatch(/no watch/);
    kv.setOnline(true);
    await Promise.all([store.providers.list(), store.tickets.tickets("rig1")]); // waits for the rebuilt copies
    expect(store.capacity.available).toBe(true);
    const c = store.capacity.counter;
    const next = store.capacity.awaitChange(c, Date.now() + 5000);
    await store.providerWriter.publish(providerState("rig1"));
    expect((await next).kind).toBe("changed");
  });
});
