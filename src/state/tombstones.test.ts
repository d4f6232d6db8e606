// The tickets copy forgets a released ticket's tombstone once no guard lists the ticket
// (docs/rules/state.md §10); every other tombstone stays for the bucket's TTL.
import { afterEach, describe, expect, it } from "vitest";
import { ticket } from "../../test/helpers/core-fixtures.js";
import { ManualClock, providerState } from "../../test/helpers/state-fixtures.js";
import type { Ticket } from "../core/index.js";
import { silentLogger } from "../log/index.js";
import { encodeJson } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { BucketMirror } from "./mirror.js";
import { openStateStore, type StateStore } from "./store.js";
import { guardJson, residencyJson, ticketJson } from "./ticket-codec.js";
import { keyLayout } from "./ticket-keys.js";

const keys = keyLayout("scoped");

import { type TicketsMirror, ticketsDecoder, tombstoneNeeded } from "./tickets-view.js";

const KEEP_MS = 10_000;
const TTL_MS = 600_000;
const mirrors: TicketsMirror[] = [];
const stores: StateStore[] = [];
afterEach(async () => {
  for (const m of mirrors.splice(0)) m.close();
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function setup() {
  const clock = new ManualClock();
  const kv = new MemoryKvStore({ now: clock.now });
  const bucket = await kv.bucket("t", { history: 1, ttlMs: TTL_MS, maxValueBytes: 0, replicas: 1 });
  const mirror: TicketsMirror = new BucketMirror({
    bucket,
    connection: kv.connection,
    decode: ticketsDecoder(keys, silentLogger),
    group: (k: string) => keys.providerOf(k),
    now: clock.now,
    // Prune on every applied entry, so each write below gives the copy its chance to forget.
    pruneEvery: 1,
    earlyForget: { keepMs: KEEP_MS, needed: (key) => tombstoneNeeded(keys, mirror, key) },
  });
  mirrors.push(mirror);
  await mirror.start();
  const put = (key: string, json: Record<string, unknown>) => bucket.put(key, encodeJson(json));
  const guard = (provider: string, pending: Ticket[]) =>
    put(keys.guard(provider), guardJson({ pending, stateRevision: 0 }));
  const write = (t: Ticket) => put(keys.ticket(t), ticketJson(t));
  const release = (t: Ticket) => bucket.delete(keys.ticket(t));
  return { clock, bucket, mirror, put, guard, write, release };
}

describe("tickets copy tombstones", () => {
  it("keeps a ticket's tombstone while its provider's guard lists it, and others only briefly", async () => {
    const { clock, bucket, mirror, put, guard, write, release } = await setup();
    const listed = ticket("p1", "m");
    const warm = ticket("p1", "m");
    const other = ticket("p2", "m");
    const resKey = keys.residency("p1", "m");
    await guard("p1", [listed]);
    for (const t of [listed, warm]) await write(t);
    await put(resKey, residencyJson({ provider: "p1", modelName: "m", modelFootprintMiB: 1 }));
    for (const t of [listed, warm]) await release(t);
    await bucket.delete(resKey);
    await guard("p2", []);
    await bucket.delete(keys.guard("p2"));
    await mirror.fresh();
    const key = (t: Ticket) => keys.ticket(t);
    // Younger than KEEP_MS: every tombstone is still there.
    expect([key(listed), key(warm), resKey, keys.guard("p2")].map((k) => mirror.shownDeleted(k))).toEqual([
      true,
      true,
      true,
      true,
    ]);

    clock.advance(KEEP_MS + 1);
    await write(other);
    await mirror.fresh();
    // The unlisted ticket's tombstone is gone; the listed one's, the residency's and the
    // guard's stay (those wait for the TTL).
    expect(mirror.knows(key(warm))).toBe(false);
    expect([key(listed), resKey, keys.guard("p2")].map((k) => mirror.shownDeleted(k))).toEqual([
      true,
      true,
      true,
    ]);

    // The next decision on p1 lists only its own ticket: the old one may go.
    const next = ticket("p1", "m");
    await guard("p1", [next]);
    await write(other);
    await mirror.fresh();
    expect(mirror.knows(key(listed))).toBe(false);
    expect(mirror.shownDeleted(resKey)).toBe(true);

    // Past the TTL every tombstone goes.
    clock.advance(TTL_MS);
    await write(other);
    await mirror.fresh();
    expect([resKey, keys.guard("p2")].map((k) => mirror.knows(k))).toEqual([false, false]);
  });
});

describe("claims after the copy forgot tombstones", () => {
  it("do not count a released ticket the last guard still lists", async () => {
    // Every tombstone the rule lets go is gone at once.
    const store = await openStateStore("memory", {
      holderId: "test",
      ticketTombstoneKeepMs: 0,
      mirrorPruneEvery: 1,
    });
    stores.push(store);
    // usable(24563) = 21616: 12224 and 12000 do not fit together.
    for (const name of ["rig1", "rig2"]) {
      await store.providerWriter.publish(providerState(name, { totalVramMiB: 24563 }));
    }
    const a = await store.tickets.claim({ provider: "rig1", model: "qwen3:14b", modelFootprintMiB: 12224 });
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    await store.tickets.release({ provider: "rig1", ticketId: a.ticket.ticketId });
    // Writes elsewhere give the copy its chances to forget; rig1's guard still lists a.
    const c = await store.tickets.claim({ provider: "rig2", model: "qwen3:8b", modelFootprintMiB: 5979 });
    expect(c.ok).toBe(true);
    const b = await store.tickets.claim({ provider: "rig1", model: "other:12b", modelFootprintMiB: 12000 });
    expect(b.ok ? "granted" : b.reason).toBe("granted");
  });
});
