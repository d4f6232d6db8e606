// Fair share in the scheduler (docs/rules/fairness.md §2–§5), on a real in-memory store: the
// crew charged at admission and at release, a lost counter restored whole by the next charge,
// the gate holding a claim back for a better-ranked waiter of another crew, and a call's band.
import { afterEach, describe, expect, it } from "vitest";
import { providerState } from "../../test/helpers/state-fixtures.js";
import type { QueueEntry, ServiceEntry } from "../core/index.js";
import {
  bucketSettings,
  MemoryKvStore,
  MODEL_DEMAND_BUCKET,
  openStateStore,
  type StateStore,
} from "../state/index.js";
import { schedulerConfigFromEnv } from "./config.js";
import { type PlaceInput, Scheduler } from "./scheduler.js";

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

let store: StateStore | undefined;
let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.close();
  await store?.close();
  scheduler = undefined;
  store = undefined;
});

async function setup(env: Record<string, string> = {}, slots = 4) {
  const kv = new MemoryKvStore();
  store = await openStateStore(kv, { holderId: "team/a@1" });
  await store.providerWriter.publish(
    providerState("gpu", {
      endpoint: "http://127.0.0.1:9",
      maxParallel: slots,
      loadedModelFootprintsMiB: { "qwen3:8b": 4863 },
      availableModelFootprintsMiB: { "qwen3:8b": 4863 },
    }),
  );
  scheduler = new Scheduler({
    state: store,
    config: schedulerConfigFromEnv(env, "team/a"),
    ops: { unload: async () => {}, load: async () => {} },
    instanceId: "p1",
  });
  return { store, scheduler, kv };
}

async function counters(s: StateStore): Promise<ServiceEntry[]> {
  await s.demand.snapshot(["qwen3:8b"]);
  return s.demand.services();
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const end = Date.now() + 5000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("fair share in the scheduler", () => {
  it("charges the crew its prompt at admission and twice its output at release", async () => {
    const { store: s, scheduler: sc } = await setup();
    const out = await sc.place(input);
    if (out.kind !== "placed") throw new Error(out.refusal.message);
    expect(out.placement.priority).toBe("standard");
    const admitted = await until(
      "the admission charge is written",
      () => counters(s),
      (c) => c.length > 0,
    );
    expect(admitted[0]).toMatchObject({ crew: "team", weight: 1 });
    expect(admitted[0]!.service).toBeCloseTo(100, 0);
    await sc.release({
      ticketId: out.placement.ticketId,
      outcome: "succeeded",
      latencyMs: 5,
      promptTokens: 120,
      promptChars: 0,
      outputTokens: 30,
      error: "",
    });
    // 120 + 2 × 30, the prompt as the engine counted it replacing the estimate.
    const settled = await until(
      "the release is charged",
      () => counters(s),
      (c) => (c[0]?.service ?? 0) > 150,
    );
    expect(settled[0]!.service).toBeCloseTo(180, 0);
    expect(sc.attribute(out.placement.ticketId)).toMatchObject({ priority: "standard", queuePosition: 0 });
  });

  it("a counter lost from the bucket comes back whole with the next charge", async () => {
    const { store: s, scheduler: sc, kv } = await setup();
    const first = await sc.place(input);
    if (first.kind !== "placed") throw new Error(first.refusal.message);
    await until(
      "the first charge",
      () => counters(s),
      (c) => c.length > 0,
    );
    // Lose it: the key deleted behind the process's back (a bucket lost in a NATS restart).
    const demand = await kv.bucket(MODEL_DEMAND_BUCKET, bucketSettings(1)[MODEL_DEMAND_BUCKET]!);
    await demand.delete("svc.team.team.p1");
    await until(
      "the counter is gone",
      () => counters(s),
      (c) => c.length === 0,
    );
    await sc.place(input);
    const back = await until(
      "the next charge restores it",
      () => counters(s),
      (c) => c.length > 0,
    );
    expect(back[0]!.service).toBeGreaterThan(199);
  });

  it("holds a claim back for a better-ranked waiter of another crew, and lets it go without one", async () => {
    const { store: s, scheduler: sc } = await setup({}, 1);
    // Another crew's call waits for the model, and this crew has had service: the one free slot
    // is the waiter's.
    const waiter: QueueEntry = {
      kind: "queue",
      id: "other-1",
      model: "qwen3:8b",
      crew: "other",
      band: "standard",
      weight: 1,
      since: Date.now() - 1000,
      expiresAt: Date.now() + 15_000,
    };
    await s.demand.putService(
      {
        kind: "svc",
        crew: "team",
        weight: 1,
        service: 5000,
        updatedAt: Date.now(),
        expiresAt: Date.now() + 600_000,
      },
      "team/a",
      "p0",
    );
    await s.demand.putQueue(waiter, "other/x");
    const held = await sc.place(input);
    expect(held.kind).toBe("refused");
    if (held.kind !== "refused") return;
    expect(held.refusal).toMatchObject({
      reason: "gpu-busy",
      queuePosition: 1,
      fairDeferral: { ahead: 1, freeSlots: 1 },
    });
    // An interactive call of this crew ranks before a standard waiter: it goes.
    const urgent = await sc.place({ ...input, priority: "interactive" });
    expect(urgent.kind).toBe("placed");
  });

  it("caps a call's band at what the crew may ask for", async () => {
    const { scheduler: sc } = await setup({
      KUBEMOOT_CREW_MAX_PRIORITY: "standard",
      KUBEMOOT_PRIORITY: "batch",
    });
    const dflt = await sc.place(input);
    const asked = await sc.place({ ...input, priority: "interactive" });
    expect(dflt.kind === "placed" && dflt.placement.priority).toBe("batch");
    expect(asked.kind === "placed" && asked.placement.priority).toBe("standard");
  });

  it("refuses a band or a weight it does not know at start", () => {
    expect(() => schedulerConfigFromEnv({ KUBEMOOT_PRIORITY: "urgent" })).toThrow(
      'KUBEMOOT_PRIORITY: expected interactive, standard, batch, got "urgent"',
    );
    expect(() => schedulerConfigFromEnv({ KUBEMOOT_CREW_WEIGHT: "0" })).toThrow(
      'KUBEMOOT_CREW_WEIGHT: expected a number > 0, got "0"',
    );
  });
});
