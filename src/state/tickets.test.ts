import { afterEach, describe, expect, it } from "vitest";
import { wrapBuckets } from "../../test/helpers/kv-wrap.js";
import { ManualClock, providerState } from "../../test/helpers/state-fixtures.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { PROVIDER_TICKETS_BUCKET } from "./buckets.js";
import { decodeJson, encodeJson, type KvEntry, type KvStore } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { openStateStore, type StateStore, type StateStoreOptions } from "./store.js";
import { keyLayout } from "./ticket-keys.js";

const keys = keyLayout("scoped");

// usable(24563) = 21616; usable(16384) = 14336.
const stores: StateStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function open(kv: KvStore, o: StateStoreOptions = {}): Promise<StateStore> {
  const s = await openStateStore(kv, { holderId: "test", ...o });
  stores.push(s);
  return s;
}

async function setup(o: StateStoreOptions = {}) {
  const kv = new MemoryKvStore(o.now !== undefined ? { now: o.now } : {});
  const store = await open(kv, o);
  const bucket = await kv.bucket(PROVIDER_TICKETS_BUCKET, {
    history: 1,
    ttlMs: 600_000,
    maxValueBytes: 4096,
    replicas: 1,
  });
  return { kv, store, bucket };
}

/** The store, with every watch event delivered `ms` late. */
function laggingWatches(inner: KvStore, ms: number): KvStore {
  return wrapBuckets(inner, (b) => ({
    watch: async (o) => {
      const w = await b.watch(o);
      async function* late(): AsyncGenerator<KvEntry> {
        for await (const e of w) {
          await new Promise((r) => setTimeout(r, ms));
          yield e;
        }
      }
      const it = late();
      return { stop: () => w.stop(), [Symbol.asyncIterator]: () => it };
    },
  }));
}

/** The store, with every delete held back until `letGo()` (a slow acknowledgement). */
function heldDeletes(inner: KvStore): { kv: KvStore; letGo: () => void; held: () => number } {
  const gates: (() => void)[] = [];
  let open = false;
  const kv = wrapBuckets(inner, (b) => ({
    delete: async (k, o) => {
      if (!open) await new Promise<void>((r) => gates.push(r));
      return b.delete(k, o);
    },
  }));
  const letGo = () => {
    open = true;
    for (const g of gates.splice(0)) g();
  };
  return { kv, letGo, held: () => gates.length };
}

describe("claims", () => {
  it("grants a cold claim that fits and refuses one that does not, with the budget it saw", async () => {
    const { store, bucket } = await setup();
    await store.providerWriter.publish(providerState("rig1", { totalVramMiB: 24563 }));
    const a = await store.tickets.claim({ provider: "rig1", model: "qwen3:14b", modelFootprintMiB: 12224 });
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    expect(a.coldLoad).toBe(true);
    expect(a.key).toBe(`t.rig1._.${a.ticket.ticketId}`);
    const raw = decodeJson((await bucket.get(a.key))!.value) as Record<string, unknown>;
    expect(Object.keys(raw)).toEqual([
      "ticketId",
      "provider",
      "modelFootprintMiB",
      "kvCacheFootprintMiB",
      "holderId",
      "claimedAt",
      "modelName",
      "evicts",
      "expiresAt",
      "coldLoad",
    ]);
    expect(raw.holderId).toBe("test");
    const b = await store.tickets.claim({ provider: "rig1", model: "qwen3:32b", modelFootprintMiB: 12000 });
    expect(b.ok).toBe(false);
    if (b.ok) return;
    expect(b.reason).toBe("no-room");
    expect(b.budget).toMatchObject({ usable: 21616, inFlight: 12224, free: 21616 - 12224 });
    expect(b.counted?.map((t) => t.ticketId)).toEqual([a.ticket.ticketId]);
  });

  it("grants warm claims without taking room, and converges on a load in flight", async () => {
    const { store } = await setup();
    await store.providerWriter.publish(
      providerState("rig1", { totalVramMiB: 16384, loadedModelFootprintsMiB: { "qwen3:8b": 14000 } }),
    );
    for (let i = 0; i < 5; i++) {
      const w = await store.tickets.claim({ provider: "rig1", model: "qwen3:8b", modelFootprintMiB: 14000 });
      expect(w.ok && !w.coldLoad).toBe(true);
    }
    const cold = await store.tickets.claim({ provider: "rig1", model: "tiny", modelFootprintMiB: 300 });
    expect(cold.ok).toBe(true);
    const same = await store.tickets.claim({ provider: "rig1", model: "tiny", modelFootprintMiB: 300 });
    expect(same.ok).toBe(true); // a second call on the model being loaded takes no new room
    const other = await store.tickets.claim({ provider: "rig1", model: "tiny2", modelFootprintMiB: 300 });
    expect(other.ok).toBe(false);
  });

  it("writes a warm ticket directly, without a decision on the guard", async () => {
    const { store, bucket } = await setup();
    await store.providerWriter.publish(
      providerState("rig1", { totalVramMiB: 16384, loadedModelFootprintsMiB: { "qwen3:8b": 14000 } }),
    );
    const w = await store.tickets.claim({ provider: "rig1", model: "qwen3:8b", modelFootprintMiB: 14000 });
    expect(w).toMatchObject({ ok: true, coldLoad: false, stats: { attempts: 1, conflicts: 0 } });
    if (!w.ok) return;
    expect(decodeJson((await bucket.get(w.key))!.value)).toMatchObject({
      modelName: "qwen3:8b",
      coldLoad: false,
    });
    expect(await bucket.get(keys.guard("rig1"))).toBeNull();
    // A cold claim still decides on the guard.
    const cold = await store.tickets.claim({ provider: "rig1", model: "tiny", modelFootprintMiB: 300 });
    expect(cold.ok).toBe(true);
    expect(await bucket.get(keys.guard("rig1"))).not.toBeNull();
  });

  it("a claim with victims sees a warm ticket another sidecar wrote just before it", async () => {
    const { kv, store } = await setup();
    // The other sidecar's watches lag 5 ms behind the server, as over a network: its copy,
    // though fresh (≤ 200 ms), misses the warm ticket unless the claim reads past its own start.
    const other = await open(laggingWatches(kv, 5), { holderId: "other" });
    await store.providerWriter.publish(
      providerState("rig1", { totalVramMiB: 16384, loadedModelFootprintsMiB: { victim: 12000 } }),
    );
    while ((await other.providers.get("rig1")) === undefined) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 20; i++) {
      const work = await store.tickets.claim({ provider: "rig1", model: "victim", modelFootprintMiB: 12000 });
      expect(work.ok && !work.coldLoad).toBe(true);
      const plan = await other.tickets.claim({
        provider: "rig1",
        model: "a",
        modelFootprintMiB: 10000,
        evicts: { victim: 12000 },
      });
      expect(plan).toMatchObject({ ok: false, reason: "victim-busy", victim: "victim" });
      if (work.ok) await store.tickets.release(work.ticket);
    }
  });

  it("release frees the room at once and is idempotent", async () => {
    const { store } = await setup();
    await store.providerWriter.publish(providerState("rig1", { totalVramMiB: 16384 }));
    const a = await store.tickets.claim({ provider: "rig1", model: "m1", modelFootprintMiB: 10000 });
    expect(a.ok).toBe(true);
    expect((await store.tickets.claim({ provider: "rig1", model: "m2", modelFootprintMiB: 10000 })).ok).toBe(
      false,
    );
    if (!a.ok) return;
    await store.tickets.release(a.ticket);
    await store.tickets.release(a.ticket);
    expect((await store.tickets.claim({ provider: "rig1", model: "m2", modelFootprintMiB: 10000 })).ok).toBe(
      true,
    );
  });

  it("a claim that needs room waits for a release of this process still in flight; a warm one does not", async () => {
    const gate = heldDeletes(new MemoryKvStore());
    const store = await open(gate.kv);
    await store.providerWriter.publish(
      providerState("rig1", { totalVramMiB: 16384, loadedModelFootprintsMiB: { warm: 1000 } }),
    );
    const a = await store.tickets.claim({ provider: "rig1", model: "m1", modelFootprintMiB: 10000 });
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    const released = store.tickets.release(a.ticket); // left in flight, as the sidecar's Release does
    expect(gate.held()).toBe(1);
    let settled = false;
    const b = store.tickets.claim({ provider: "rig1", model: "m2", modelFootprintMiB: 10000 }).finally(() => {
      settled = true;
    });
    // A warm claim takes no room: it is granted while the delete is still held.
    const w = await store.tickets.claim({ provider: "rig1", model: "warm", modelFootprintMiB: 1000 });
    expect(w.ok && !w.coldLoad).toBe(true);
    expect(settled).toBe(false);
    gate.letGo();
    await released;
    expect((await b).ok).toBe(true);
  });

  it("counts a victim's credit once: two plans on one victim never both win; a busy victim refuses", async () => {
    const { store } = await setup();
    await store.providerWriter.publish(
      providerState("rig1", { totalVramMiB: 16384, loadedModelFootprintsMiB: { victim: 12000 } }),
    );
    // free = 14336 - 12000 = 2336: a 10000 load needs the victim's credit.
    const plans = await Promise.all([
      store.tickets.claim({
        provider: "rig1",
        model: "a",
        modelFootprintMiB: 10000,
        evicts: { victim: 12000 },
      }),
      store.tickets.claim({
        provider: "rig1",
        model: "b",
        modelFootprintMiB: 10000,
        evicts: { victim: 12000 },
      }),
    ]);
    expect(plans.filter((p) => p.ok).length).toBe(1);
    const winner = plans.find((p) => p.ok);
    if (winner?.ok !== true) return;
    await store.tickets.release(winner.ticket);
    const work = await store.tickets.claim({ provider: "rig1", model: "victim", modelFootprintMiB: 12000 });
    expect(work.ok).toBe(true);
    const busy = await store.tickets.claim({
      provider: "rig1",
      model: "a",
      modelFootprintMiB: 10000,
      evicts: { victim: 12000 },
    });
    expect(busy).toMatchObject({ ok: false, reason: "victim-busy", victim: "victim" });
  });

  it("stops counting a victim's credit once it is no longer resident", async () => {
    const { store } = await setup();
    await store.providerWriter.publish(
      providerState("rig1", { totalVramMiB: 16384, loadedModelFootprintsMiB: { victim: 12000 } }),
    );
    const a = await store.tickets.claim({
      provider: "rig1",
      model: "a",
      modelFootprintMiB: 10000,
      evicts: { victim: 12000 },
    });
    expect(a.ok).toBe(true);
    // The victim was unloaded: no resident victim, no credit; the load still counts.
    await store.providerWriter.publish(providerState("rig1", { totalVramMiB: 16384 }));
    const view = await store.tickets.view("rig1");
    expect(view.budget).toMatchObject({ resident: 0, credit: 0, inFlight: 10000 });
    expect((await store.tickets.claim({ provider: "rig1", model: "b", modelFootprintMiB: 5000 })).ok).toBe(
      false,
    );
    expect((await store.tickets.claim({ provider: "rig1", model: "c", modelFootprintMiB: 4000 })).ok).toBe(
      true,
    );
  });

  it("refuses claims on unknown and stale providers", async () => {
    const clock = new ManualClock();
    const { store } = await setup({ now: clock.now });
    expect(await store.tickets.claim({ provider: "nope", model: "m", modelFootprintMiB: 1 })).toMatchObject({
      ok: false,
      reason: "provider-unknown",
    });
    await store.providerWriter.publish(
      providerState("old", { lastProbedAt: new Date(clock.ms - 6 * 60_000).toISOString() }),
    );
    expect(await store.tickets.claim({ provider: "old", model: "m", modelFootprintMiB: 1 })).toMatchObject({
      ok: false,
      reason: "provider-unknown",
    });
  });

  it("rejects bad arguments with InvalidArgument", async () => {
    const { store } = await setup();
    await expect(
      store.tickets.claim({ provider: "bad name", model: "m", modelFootprintMiB: 1 }),
    ).rejects.toSatisfy((e) => KubemootError.is(e, ErrorCode.InvalidArgument));
    await expect(store.tickets.claim({ provider: "p", model: "m", modelFootprintMiB: -1 })).rejects.toSatisfy(
      (e) => KubemootError.is(e, ErrorCode.InvalidArgument),
    );
  });
});

describe("leases", () => {
  it("a ticket past its lease (plus grace) stops counting; renew extends a live one only", async () => {
    const clock = new ManualClock();
    const { store } = await setup({ now: clock.now, ticketLeaseMs: 10_000, leaseGraceMs: 1000 });
    await store.providerWriter.publish(providerState("rig1", { totalVramMiB: 16384, lastProbedAt: "" }));
    const a = await store.tickets.claim({ provider: "rig1", model: "m1", modelFootprintMiB: 10000 });
    if (!a.ok) throw new Error("claim failed");
    expect(a.ticket.expiresAt).toBe(clock.ms + 10_000);
    clock.advance(8000);
    const renewed = await store.tickets.renew(a.ticket);
    expect(renewed.expiresAt).toBe(clock.ms + 10_000);
    clock.advance(10_500); // past the lease, within the grace
    expect((await store.tickets.claim({ provider: "rig1", model: "m2", modelFootprintMiB: 10000 })).ok).toBe(
      false,
    );
    await expect(store.tickets.renew(a.ticket)).rejects.toSatisfy((e) =>
      KubemootError.is(e, ErrorCode.NotFound),
    );
    clock.advance(600);
    expect((await store.tickets.claim({ provider: "rig1", model: "m2", modelFootprintMiB: 10000 })).ok).toBe(
      true,
    );
    await store.tickets.release(a.ticket);
    await expect(store.tickets.renew(a.ticket)).rejects.toSatisfy((e) =>
      KubemootError.is(e, ErrorCode.NotFound),
    );
  });
});

describe("the guard's pending tickets", () => {
  it("counts a decided ticket whose holder died before writing it, and carries it in its own guard", async () => {
    const { store, bucket } = await setup();
    await store.providerWriter.publish(providerState("rig1", { totalVramMiB: 16384 }));
    const orphan = {
      ticketId: "00000000-0000-4000-8000-000000000001",
      provider: "rig1",
      modelFootprintMiB: 10000,
      kvCacheFootprintMiB: 0,
      holderId: "dead",
      claimedAt: new Date().toISOString(),
      modelName: "m1",
      evicts: {},
      expiresAt: Date.now() + 60_000,
      coldLoad: true,
    };
    await bucket.update(keys.guard("rig1"), encodeJson({ v: 1, pending: [orphan] }), 0);
    const b = await store.tickets.claim({ provider: "rig1", model: "m2", modelFootprintMiB: 10000 });
    expect(b.ok).toBe(false);
    // A grant commits a guard that still lists the orphan beside its own ticket: nobody writes
    // another holder's ticket (it may be another namespace's), and the next decision counts it.
    const c = await store.tickets.claim({ provider: "rig1", model: "small", modelFootprintMiB: 1000 });
    expect(c.ok).toBe(true);
    expect(await bucket.get(keys.ticket({ ...orphan }))).toBeNull();
    const g = decodeJson((await bucket.get(keys.guard("rig1")))!.value) as {
      pending: { ticketId: string }[];
    };
    expect(g.pending.map((t) => t.ticketId).sort()).toEqual(
      [orphan.ticketId, c.ok ? c.ticket.ticketId : ""].sort(),
    );
    const d = await store.tickets.claim({ provider: "rig1", model: "m2", modelFootprintMiB: 10000 });
    expect(d.ok).toBe(false);
  });

  it("never brings back a pending ticket its holder released before writing it", async () => {
    const { store, bucket } = await setup();
    await store.providerWriter.publish(providerState("rig1", { totalVramMiB: 16384 }));
    const t = {
      ticketId: "00000000-0000-4000-8000-000000000002",
      provider: "rig1",
      modelFootprintMiB: 10000,
      kvCacheFootprintMiB: 0,
      holderId: "x",
      claimedAt: new Date().toISOString(),
      modelName: "m1",
      evicts: {},
      expiresAt: Date.now() + 60_000,
    };
    await bucket.update(keys.guard("rig1"), encodeJson({ v: 1, pending: [t] }), 0);
    await store.tickets.release(t);
    const c = await store.tickets.claim({ provider: "rig1", model: "m2", modelFootprintMiB: 10000 });
    expect(c.ok).toBe(true);
    expect(await bucket.get(keys.ticket({ provider: "rig1", ticketId: t.ticketId }))).toBeNull();
  });
});

describe("residency overlays and scans", () => {
  it("an overlay counts as resident; scans use the exact provider prefix and skip foreign keys", async () => {
    const { store, bucket } = await setup();
    await store.providerWriter.publish(providerState("ollama-gpu", { totalVramMiB: 16384 }));
    await store.providerWriter.publish(providerState("ollama-gpu-extended", { totalVramMiB: 16384 }));
    await store.tickets.writeResidency({
      provider: "ollama-gpu",
      modelName: "qwen3:8b",
      modelFootprintMiB: 6000,
    });
    const a = await store.tickets.claim({
      provider: "ollama-gpu-extended",
      model: "x",
      modelFootprintMiB: 1000,
    });
    const warm = await store.tickets.claim({
      provider: "ollama-gpu",
      model: "qwen3:8b",
      modelFootprintMiB: 6000,
    });
    expect(warm.ok && !warm.coldLoad).toBe(true);
    await bucket.put("ollama-gpu__not-json", new TextEncoder().encode("{oops"));
    await bucket.put("ollama-gpu__array", encodeJson([1, 2]));
    await bucket.put("something-else", encodeJson({ modelName: "x" }));
    const mine = await store.tickets.tickets("ollama-gpu");
    expect(mine.map((t) => t.modelName)).toEqual(["qwen3:8b"]);
    expect((await store.tickets.tickets("ollama-gpu-extended")).length).toBe(1);
    expect(a.ok).toBe(true);
    const view = await store.tickets.view("ollama-gpu");
    expect(view.budget).toMatchObject({ resident: 6000, inFlight: 0 });
    expect(view.residencies).toEqual([
      { provider: "ollama-gpu", modelName: "qwen3:8b", modelFootprintMiB: 6000 },
    ]);
    await store.tickets.clearResidency("ollama-gpu", "qwen3:8b");
    // The warm ticket now names a model that is not resident: its call will load it again, so
    // it takes room like a load in flight (issue 16: no overcommit on a stale belief).
    expect((await store.tickets.view("ollama-gpu")).budget).toMatchObject({ resident: 0, inFlight: 6000 });
  });
});

describe("the planner's scan", () => {
  it("everything() lists live tickets and overlays of every provider, without passed leases or foreign keys", async () => {
    const clock = new ManualClock();
    const { store, bucket } = await setup({ now: clock.now });
    await store.providerWriter.publish(providerState("rig1", { totalVramMiB: 24563 }));
    await store.providerWriter.publish(providerState("rig2", { totalVramMiB: 24563 }));
    await store.tickets.writeResidency({
      provider: "rig2",
      modelName: "m2",
      modelFootprintMiB: 3000,
      writtenAt: 5,
      loadMs: 1234,
    });
    const long = await store.tickets.claim({ provider: "rig1", model: "m1", modelFootprintMiB: 1000 });
    const short = await store.tickets.claim({
      provider: "rig2",
      model: "m3",
      modelFootprintMiB: 1000,
      leaseMs: 1000,
    });
    expect(long.ok && short.ok).toBe(true);
    await bucket.put("rig1__not-json", new TextEncoder().encode("{oops"));
    await bucket.put("something-else", encodeJson({ modelName: "x" }));
    const before = await store.tickets.everything();
    expect(before.tickets.map((t) => t.modelName).sort()).toEqual(["m1", "m3"]);
    // Our writtenAt and loadMs travel with the overlay.
    expect(before.residencies).toEqual([
      { provider: "rig2", modelName: "m2", modelFootprintMiB: 3000, writtenAt: 5, loadMs: 1234 },
    ]);
    clock.advance(2000); // the short lease has passed
    const after = await store.tickets.everything();
    expect(after.tickets.map((t) => t.modelName)).toEqual(["m1"]);
    expect(after.residencies.length).toBe(1);
  });
});

describe("availability", () => {
  it("reports StateUnavailable while the backend is away, then recovers", async () => {
    const { kv, store } = await setup({ catchUpTimeoutMs: 500 });
    await store.providerWriter.publish(providerState("rig1"));
    expect((await store.providers.list()).length).toBe(1);
    kv.setOnline(false);
    await expect(store.providers.list()).rejects.toSatisfy((e) =>
      KubemootError.is(e, ErrorCode.StateUnavailable),
    );
    await expect(
      store.tickets.claim({ provider: "rig1", model: "m", modelFootprintMiB: 1 }),
    ).rejects.toSatisfy((e) => KubemootError.is(e, ErrorCode.StateUnavailable));
    expect(store.available).toBe(false);
    kv.setOnline(true);
    expect((await store.providers.list()).length).toBe(1);
    expect((await store.tickets.claim({ provider: "rig1", model: "m", modelFootprintMiB: 1 })).ok).toBe(true);
  });
});

describe("lease configuration", () => {
  it("uses the configured lease by default and a per-claim lease when given", async () => {
    const clock = new ManualClock();
    const { store } = await setup({ now: clock.now, ticketLeaseMs: 42_000 });
    await store.providerWriter.publish(providerState("rig1", { lastProbedAt: "" }));
    const a = await store.tickets.claim({ provider: "rig1", model: "m", modelFootprintMiB: 1 });
    const b = await store.tickets.claim({
      provider: "rig1",
      model: "m",
      modelFootprintMiB: 1,
      leaseMs: 5000,
    });
    expect(a.ok && a.ticket.expiresAt).toBe(clock.ms + 42_000);
    expect(b.ok && b.ticket.expiresAt).toBe(clock.ms + 5000);
  });
});
