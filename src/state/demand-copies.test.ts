// DemandCopies (docs/rules/state.md §10.2) on the in-memory KV: per model, a copy follows
// exactly the keys its model filter names; a selection key whose namespace token equals a
// model's is read once, from the selection copy; the resident models are followed and renewed
// only when their revision changes; a model no decision needs for idleMs is dropped.
import { afterEach, describe, expect, it } from "vitest";
import type { DemandEntry } from "../core/index.js";
import { DemandCopies, type DemandMirror } from "./demand-copies.js";
import { decodeJson, encodeJson, type KvBucket } from "./kv.js";
import { MemoryKvStore } from "./memory-kv.js";
import { BucketMirror } from "./mirror.js";
import { keyLayout } from "./ticket-keys.js";

const open: DemandCopies[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

async function setup(residents?: () => { revision: string; models: Iterable<string> }) {
  const kv = new MemoryKvStore();
  const bucket = await kv.bucket("kubemoot_model_demand", {
    history: 1,
    ttlMs: 0,
    maxValueBytes: 0,
    replicas: 1,
  });
  const clock = { ms: 0 };
  const made: string[] = [];
  const copies = new DemandCopies(
    {
      keys: keyLayout("scoped", "crew/a@1"),
      scope: "candidates",
      make: (filter): DemandMirror => {
        made.push(filter);
        return new BucketMirror({
          bucket,
          connection: kv.connection,
          filter,
          now: Date.now,
          decode: (e) => decodeJson(e.value) as DemandEntry,
        });
      },
      monoNow: () => clock.ms,
      idleMs: 60_000,
      ...(residents !== undefined ? { residents } : {}),
    },
    bucket,
  );
  open.push(copies);
  await copies.start();
  return { bucket, copies, clock, made };
}

const wait = (model: string, agent: string): DemandEntry => ({
  kind: "wait",
  model,
  agent,
  expiresAt: Date.now() + 60_000,
});

async function put(bucket: KvBucket, key: string, e: DemandEntry) {
  await bucket.put(key, encodeJson(e));
}

describe("demand copies per model", () => {
  it("hold the followed models' keys and every selection key, each once", async () => {
    const { bucket, copies, made } = await setup();
    const keys = keyLayout("scoped", "");
    await put(bucket, keys.wait("m", "ns/a"), wait("m", "ns/a"));
    await put(bucket, keys.wait("other", "ns/a"), wait("other", "ns/a"));
    // A namespace named like the model: `sel.m.crew.a` matches the model filter `*.m.>` too.
    await put(bucket, keys.sel("m/crew", "m/a"), {
      kind: "sel",
      rate: 1,
      updatedAt: 0,
      expiresAt: Date.now() + 60_000,
      models: ["m"],
    });
    // Likewise a service counter of namespace m (docs/rules/fairness.md §4), and a waiter of m.
    await put(bucket, keys.service("m/crew", "m/a", "p1"), {
      kind: "svc",
      crew: "m/crew",
      weight: 1,
      service: 10,
      updatedAt: 0,
      expiresAt: Date.now() + 60_000,
    });
    await put(bucket, keys.queue("m", "ns/a", "call1"), {
      kind: "queue",
      id: "call1",
      model: "m",
      crew: "ns",
      band: "standard",
      weight: 1,
      since: 1,
      expiresAt: Date.now() + 60_000,
    });
    await copies.fresh(["m"]);
    expect(made).toEqual(["sel.>", "svc.>", "*.m.>"]);
    const got = [...copies.entries()].map((e) => e.key).sort();
    expect(got).toEqual(["queue.m.ns.call1", "sel.m.m_2fcrew.a", "wait.m.ns.a"]);
    // Counters are read on their own, each once.
    expect([...copies.services()].map((e) => e.key)).toEqual(["svc.m.m_2fcrew.p1"]);
    expect(copies.get(keys.wait("other", "ns/a"))).toBeUndefined();
  });

  it("follow the residents when their revision changes, and drop models idle for idleMs", async () => {
    let r = { revision: "1", models: ["r1"] };
    let scans = 0;
    const { copies, clock } = await setup(() => ({
      revision: r.revision,
      models: (function* () {
        scans++;
        yield* r.models;
      })(),
    }));
    copies.interest(["m"]);
    expect(copies.followed.sort()).toEqual(["m", "r1"]);
    copies.interest(["m"]);
    expect(scans).toBe(1); // same revision: no scan
    r = { revision: "2", models: ["r2"] };
    clock.ms = 1000;
    copies.interest(["m"]);
    expect(copies.followed.sort()).toEqual(["m", "r1", "r2"]);
    // r1 is neither named nor resident any more: gone after idleMs; m and r2 stay in use.
    clock.ms = 70_000;
    r = { revision: "3", models: ["r2"] };
    copies.interest(["m"]);
    expect(copies.followed.sort()).toEqual(["m", "r2"]);
    // m is no longer named; r2, still resident, is renewed by the periodic rescan.
    clock.ms = 200_000;
    copies.interest([]);
    expect(copies.followed).toEqual(["r2"]);
    const rev = copies.revision;
    r = { revision: "4", models: [] };
    clock.ms = 300_000;
    copies.interest([]);
    expect(copies.followed).toEqual([]);
    expect(copies.revision).toBeGreaterThan(rev);
  });
});
