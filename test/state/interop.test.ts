// Interop with Kubemoot on a real nats-server: provider states, tickets and residency overlays
// written by Kubemoot's operator and runtime (exact JSON, no lease, no coldLoad) are honoured;
// ours read back with Kubemoot's field names; foreign and malformed keys are skipped.
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MODEL_DEMAND_BUCKET,
  PROVIDER_STATE_BUCKET,
  PROVIDER_TICKETS_BUCKET,
} from "../../src/state/buckets.js";
import { openStateStore, type StateStore } from "../../src/state/store.js";
import { NatsServer } from "../helpers/nats-server.js";

// Kubemoot's example provider state, byte for byte (docs/rules/state.md §2.1; usable(24563) = 21616).
const KUBEMOOT_STATE =
  '{"name":"ollama-rig1","endpoint":"http://ollama.ollama-rig1:11434","maxParallel":1,' +
  '"activeCount":0,"queueDepth":0,"loadedModels":[],"ready":true,"lastProbedAt":"2026-06-11T00:00:00Z",' +
  '"totalVramMiB":24563,"loadedModelFootprintsMiB":{},"availableModelFootprintsMiB":{"qwen3:32b":27847,"qwen3:8b":4863}}';

// A ticket as Kubemoot's runtime writes it: its fields only (no expiresAt: lives until the TTL).
const KUBEMOOT_TICKET_ID = "3f1c2b9a-8d4e-4f6a-9b1c-2d3e4f5a6b7c";
const KUBEMOOT_TICKET =
  `{"ticketId":"${KUBEMOOT_TICKET_ID}","provider":"ollama-rig1","modelFootprintMiB":12224,` +
  '"kvCacheFootprintMiB":1024,"holderId":"crew-a/tooler-1","claimedAt":"2026-06-11T00:00:05Z",' +
  '"modelName":"qwen3:14b","evicts":{}}';

const enc = (s: string) => new TextEncoder().encode(s);

describe("interop with Kubemoot's buckets", () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let store: StateStore;

  beforeAll(async () => {
    server = await NatsServer.start();
    // The sidecar opens the buckets first (as it would in a shared cluster), Kubemoot writes raw.
    store = await openStateStore(server.url, {
      now: () => Date.parse("2026-06-11T00:01:00Z"),
      keyLayout: "kubemoot",
    });
    nc = await connect({ servers: server.url });
    const kvm = new Kvm(nc);
    const state = await kvm.open(PROVIDER_STATE_BUCKET);
    const tickets = await kvm.open(PROVIDER_TICKETS_BUCKET);
    await state.put("ollama-rig1", enc(KUBEMOOT_STATE));
    await tickets.put(`ollama-rig1__${KUBEMOOT_TICKET_ID}`, enc(KUBEMOOT_TICKET));
    // Foreign and malformed keys.
    await tickets.put("ollama-rig1__not-json", enc("{oops"));
    await tickets.put("ollama-rig1__array", enc("[1,2,3]"));
    await tickets.put("ollama-rig1__x__y", enc(KUBEMOOT_TICKET));
    await tickets.put(
      "ollama-rig1-extended__t1",
      enc(KUBEMOOT_TICKET.replace("ollama-rig1", "ollama-rig1-extended")),
    );
    await tickets.put(
      "ollama-rig1__other-provider",
      enc(KUBEMOOT_TICKET.replace("ollama-rig1", "ollama-rig2")),
    );
    await tickets.put("some.other.key", enc('{"hello":1}'));
    await state.put("broken-provider", enc("not json at all"));
    // A residency overlay as Kubemoot writes it (its own key spelling; we read the value).
    await tickets.put(
      "residency__ollama-rig1__qwen3_8b",
      enc('{"provider":"ollama-rig1","modelName":"qwen3:8b","modelFootprintMiB":5979}'),
    );
  });

  afterAll(async () => {
    await store?.close();
    await nc?.close();
    await server?.dispose();
  });

  it("creates the buckets with the spec's settings", async () => {
    const jsm = await jetstreamManager(nc);
    const cfg = async (b: string) => (await jsm.streams.info(`KV_${b}`)).config;
    const state = await cfg(PROVIDER_STATE_BUCKET);
    const tickets = await cfg(PROVIDER_TICKETS_BUCKET);
    const demand = await cfg(MODEL_DEMAND_BUCKET);
    expect([state.max_msgs_per_subject, state.max_age]).toEqual([1, 0]);
    expect([tickets.max_msgs_per_subject, tickets.max_age, tickets.max_msg_size]).toEqual([1, 600e9, 4096]);
    expect([demand.max_msgs_per_subject, demand.max_age, demand.max_msg_size]).toEqual([1, 6 * 3600e9, 4096]);
  });

  it("reads Kubemoot's provider state and skips unreadable ones", async () => {
    const list = await store.providers.list();
    expect(list.map((s) => s.name)).toEqual(["ollama-rig1"]);
    expect(list[0]).toMatchObject({
      endpoint: "http://ollama.ollama-rig1:11434",
      totalVramMiB: 24563,
      availableModelFootprintsMiB: { "qwen3:32b": 27847, "qwen3:8b": 4863 },
    });
  });

  it("honours Kubemoot's ticket and residency overlay in the budget, skipping foreign keys", async () => {
    const view = await store.tickets.view("ollama-rig1");
    expect(view.tickets.map((t) => t.ticketId)).toEqual([KUBEMOOT_TICKET_ID]);
    expect(view.tickets[0]).toMatchObject({ holderId: "crew-a/tooler-1", modelName: "qwen3:14b" });
    expect(view.tickets[0]?.expiresAt).toBeUndefined();
    expect(view.residencies).toEqual([
      { provider: "ollama-rig1", modelName: "qwen3:8b", modelFootprintMiB: 5979 },
    ]);
    // resident 5979 + Kubemoot's in-flight 12224 = 18203 of 21616: 3413 free.
    expect(view.budget).toMatchObject({ usable: 21616, resident: 5979, inFlight: 12224, free: 3413 });
    const tooBig = await store.tickets.claim({
      provider: "ollama-rig1",
      model: "qwen3:4b",
      modelFootprintMiB: 4000,
    });
    expect(tooBig).toMatchObject({ ok: false, reason: "no-room" });
    const warm = await store.tickets.claim({
      provider: "ollama-rig1",
      model: "qwen3:8b",
      modelFootprintMiB: 5979,
    });
    expect(warm).toMatchObject({ ok: true, coldLoad: false });
    const small = await store.tickets.claim({
      provider: "ollama-rig1",
      model: "qwen3:1.7b",
      modelFootprintMiB: 3000,
    });
    expect(small).toMatchObject({ ok: true, coldLoad: true });
  });

  it("writes tickets Kubemoot can read: its field names, its key layout", async () => {
    const r = await store.tickets.claim({
      provider: "ollama-rig1",
      model: "qwen3:8b",
      modelFootprintMiB: 5979,
    });
    if (!r.ok) throw new Error(`claim refused: ${r.reason}`);
    const tickets = await new Kvm(nc).open(PROVIDER_TICKETS_BUCKET);
    const e = await tickets.get(`ollama-rig1__${r.ticket.ticketId}`);
    const raw = e!.json<Record<string, unknown>>();
    for (const field of [
      "ticketId",
      "provider",
      "modelFootprintMiB",
      "kvCacheFootprintMiB",
      "holderId",
      "claimedAt",
      "modelName",
      "evicts",
    ]) {
      expect(raw, field).toHaveProperty(field);
    }
    expect(raw.ticketId).toBe(r.ticket.ticketId);
    expect(raw.provider).toBe("ollama-rig1");
    expect(Number.isNaN(Date.parse(String(raw.claimedAt)))).toBe(false);
    expect(typeof raw.expiresAt).toBe("number");
    // A per-provider scan with Kubemoot's exact prefix finds it, and only its provider's keys.
    const keys: string[] = [];
    for await (const k of await tickets.keys()) if (k.startsWith("ollama-rig1__")) keys.push(k);
    expect(keys).toContain(`ollama-rig1__${r.ticket.ticketId}`);
    expect(keys.some((k) => k.startsWith("ollama-rig1-extended"))).toBe(false);
    await store.tickets.release(r.ticket);
    expect(await tickets.get(`ollama-rig1__${r.ticket.ticketId}`)).toMatchObject({ operation: "DEL" });
  });

  it("reads and writes demand entries with Kubemoot's keys", async () => {
    const demand = await new Kvm(nc).open(MODEL_DEMAND_BUCKET);
    await demand.put(
      "wait.qwen3_3a14b.crew-a_2ftooler-2",
      enc('{"kind":"wait","model":"qwen3:14b","agent":"crew-a/tooler-2","expiresAt":1781136300000}'),
    );
    await store.demand.putIntents("crew-a/tooler-1", "thread-9", ["qwen3:8b"]);
    const snap = await store.demand.snapshot();
    expect(snap.wait).toEqual([
      { kind: "wait", model: "qwen3:14b", agent: "crew-a/tooler-2", expiresAt: 1781136300000 },
    ]);
    const e = await demand.get("intent.qwen3_3a8b.crew-a_2ftooler-1");
    expect(e?.json()).toMatchObject({
      kind: "intent",
      model: "qwen3:8b",
      agent: "crew-a/tooler-1",
      thread: "thread-9",
    });
  });
});
