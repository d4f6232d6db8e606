import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../test/helpers/state-fixtures.js";
import { MODEL_DEMAND_BUCKET } from "./buckets.js";
import { decodeJson, encodeJson } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { openStateStore, type StateStore } from "./store.js";
import type { KeyLayoutName } from "./ticket-keys.js";

const stores: StateStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function setup(keyLayout: KeyLayoutName = "scoped") {
  const clock = new ManualClock(Date.parse("2026-06-11T00:00:00Z"));
  const kv = new MemoryKvStore({ now: clock.now });
  const store = await openStateStore(kv, { now: clock.now, keyLayout });
  stores.push(store);
  const bucket = await kv.bucket(MODEL_DEMAND_BUCKET, {
    history: 1,
    ttlMs: 0,
    maxValueBytes: 0,
    replicas: 1,
  });
  return { clock, store, bucket, kv };
}

describe("demand board", () => {
  // docs/rules/state.md §2.3 (kubemoot) and §2.4 (scoped: the agent's namespace a token of its own).
  it.each([
    [
      "kubemoot",
      "wait.qwen2_2e5_3a14b.ns_2fagent",
      "intent.m1.ns_2fagent",
      "use.m1",
      "sel.ns_2fcrew.ns_2fagent",
    ],
    ["scoped", "wait.qwen2_2e5_3a14b.ns.agent", "intent.m1.ns.agent", "use.m1.ns", "sel.ns.ns_2fcrew.agent"],
  ] as const)(
    "writes the %s layout's keys and Kubemoot's values",
    async (layout, waitKey, intentKey, useKey, selKey) => {
      const { clock, store, bucket } = await setup(layout);
      await store.demand.putWait("qwen2.5:14b", "ns/agent");
      const w = decodeJson((await bucket.get(waitKey))!.value);
      expect(w).toEqual({
        kind: "wait",
        model: "qwen2.5:14b",
        agent: "ns/agent",
        expiresAt: clock.ms + 600_000,
      });
      await store.demand.putIntents("ns/agent", "t1", ["m1", "m1"]);
      const i = decodeJson((await bucket.get(intentKey))!.value);
      expect(i).toEqual({
        kind: "intent",
        model: "m1",
        agent: "ns/agent",
        thread: "t1",
        expiresAt: clock.ms + 180_000,
      });
      await store.demand.recordUse("m1", "ns/agent");
      expect(await bucket.get(useKey)).not.toBeNull();
      await store.demand.recordSelection("ns/crew", "ns/agent", ["m1", "m2"]);
      const s = decodeJson((await bucket.get(selKey))!.value);
      expect(s).toEqual({
        kind: "sel",
        rate: 1,
        updatedAt: clock.ms,
        expiresAt: clock.ms + 6 * 3_600_000,
        models: ["m1", "m2"],
      });
    },
  );

  it("decays rates with a 10-minute half-life and adds one per event", async () => {
    const { clock, store } = await setup();
    expect((await store.demand.recordUse("m", "a")).rate).toBe(1);
    clock.advance(600_000);
    expect((await store.demand.recordUse("m", "a")).rate).toBeCloseTo(1.5, 10);
    clock.advance(1_200_000);
    expect((await store.demand.recordSelection("c", "a", ["m"])).rate).toBe(1);
    expect((await store.demand.recordUse("m", "b")).rate).toBeCloseTo(1.375, 10);
  });

  it("concurrent uses all count (compare-and-set)", async () => {
    const { store } = await setup();
    await Promise.all(Array.from({ length: 20 }, () => store.demand.recordUse("m", "a")));
    const snap = await store.demand.snapshot();
    expect(snap.use[0]?.rate).toBe(20);
  });

  it("coalesces the uses of one model: one write in flight, the rest go together in the next", async () => {
    const { store, kv } = await setup();
    const bucket = await kv.bucket(MODEL_DEMAND_BUCKET, {
      history: 1,
      ttlMs: 0,
      maxValueBytes: 0,
      replicas: 1,
    });
    const watch = await bucket.watch({ include: "updates" });
    let writes = 0;
    const counting = (async () => {
      for await (const e of watch) if (e.key.startsWith("use.m")) writes++;
    })();
    const rates = await Promise.all(Array.from({ length: 50 }, () => store.demand.recordUse("m", "a")));
    expect(rates.map((r) => r.rate).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    // A lingering use waits for company, then all go in one write; flush cuts the wait short.
    const lingering = Array.from({ length: 10 }, () => store.demand.recordUse("m", "b", 60_000));
    await store.demand.flush();
    expect((await Promise.all(lingering)).at(-1)?.rate).toBe(60);
    await new Promise((r) => setTimeout(r, 10));
    watch.stop();
    await counting;
    expect(writes).toBeLessThanOrEqual(3); // 1 + 49 coalesced (+ 10 lingering), not 60
    expect((await store.demand.snapshot()).use[0]).toMatchObject({ rate: 60, agent: "b" });
  });

  it("the snapshot holds live entries only; clearing a thread removes its intents only", async () => {
    const { clock, store, bucket } = await setup();
    await store.demand.putWait("m1", "ns/a");
    await store.demand.putIntents("ns/a", "t1", ["m1", "m2"]);
    await store.demand.putIntents("ns/b", "t2", ["m1"]);
    await store.demand.recordUse("m1", "ns/a");
    await store.demand.recordSelection("ns/crew", "ns/a", ["m1"]);
    await bucket.put("wait.bad.x", new TextEncoder().encode("nope"));
    await bucket.put("intent.m9.ns_2fz", encodeJson({ kind: "wait" })); // kind does not match the key
    let snap = await store.demand.snapshot();
    expect([snap.wait.length, snap.intent.length, snap.use.length, snap.sel.length]).toEqual([1, 3, 1, 1]);
    expect(snap.entries.length).toBe(6);
    expect(await store.demand.clearThread("t1")).toBe(2);
    snap = await store.demand.snapshot();
    expect(snap.intent.map((i) => i.thread)).toEqual(["t2"]);
    clock.advance(180_001); // intents expire
    snap = await store.demand.snapshot();
    expect(snap.intent).toEqual([]);
    expect(snap.wait.length).toBe(1);
    await store.demand.clearWait("m1", "ns/a");
    expect((await store.demand.snapshot()).wait).toEqual([]);
  });
});
