// The shared state where the buckets live in another JetStream than the client's own: a hub
// domain reached from a leaf node, and another account's JetStream imported under an API
// prefix. A whole state store claims and releases through it, and the buckets are where the
// options point, not in the JetStream the client would reach by default (the leaf has one of
// its own). The KV contract runs through both setups too (kv-contract.test.ts).
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROVIDER_TICKETS_BUCKET } from "../../src/state/buckets.js";
import type { NatsKvOptions } from "../../src/state/nats-kv.js";
import { openStateStore, type StateStore } from "../../src/state/store.js";
import {
  type NatsImportedJetStream,
  type NatsLeafDomains,
  startNatsImportedJetStream,
  startNatsLeafDomains,
} from "../helpers/nats-server.js";
import { providerState } from "../helpers/state-fixtures.js";

/** Names of the KV buckets a JetStream holds. */
async function bucketsOf(nc: NatsConnection, domain?: string): Promise<string[]> {
  const jsm = await jetstreamManager(nc, domain === undefined ? {} : { domain });
  const names: string[] = [];
  for await (const n of jsm.streams.names()) if (n.startsWith("KV_")) names.push(n.slice(3));
  return names.sort();
}

/** Claims and releases on one provider through `store`, checking the ticket as `owner` sees it. */
async function claimAndRelease(store: StateStore, owner: NatsConnection, domain?: string): Promise<void> {
  await store.providerWriter.publish(providerState("remote-gpu", { totalVramMiB: 16384 }));
  const cold = await store.tickets.claim({ provider: "remote-gpu", model: "m1", modelFootprintMiB: 7000 });
  if (!cold.ok) throw new Error(`claim refused: ${cold.reason}`);
  expect(cold.coldLoad).toBe(true);
  const full = await store.tickets.claim({ provider: "remote-gpu", model: "m2", modelFootprintMiB: 9000 });
  expect(full).toMatchObject({ ok: false, reason: "no-room" });
  // The owner of the JetStream sees the ticket under Kubemoot's key.
  const tickets = await new Kvm(jetstream(owner, domain === undefined ? {} : { domain })).open(
    PROVIDER_TICKETS_BUCKET,
  );
  expect((await tickets.get(cold.key))?.operation).toBe("PUT");
  await store.tickets.release(cold.ticket);
  expect((await tickets.get(cold.key))?.operation).toBe("DEL");
  const again = await store.tickets.claim({ provider: "remote-gpu", model: "m2", modelFootprintMiB: 9000 });
  expect(again).toMatchObject({ ok: true, coldLoad: true });
}

const BUCKETS = ["kubemoot_model_demand", "kubemoot_provider_state", "kubemoot_provider_tickets"];

describe("state through a JetStream domain (hub and leaf node)", () => {
  let domains: NatsLeafDomains;
  let store: StateStore;
  let hub: NatsConnection;
  let leaf: NatsConnection;

  beforeAll(async () => {
    domains = await startNatsLeafDomains();
    const nats: Omit<NatsKvOptions, "servers"> = { domain: domains.domain };
    store = await openStateStore(domains.leaf.url, { nats });
    hub = await connect({ servers: domains.hub.url });
    leaf = await connect({ servers: domains.leaf.url });
  });

  afterAll(async () => {
    await store?.close();
    await hub?.close();
    await leaf?.close();
    await domains?.dispose();
  });

  it("keeps the buckets in the hub's domain, none in the leaf's own JetStream", async () => {
    expect(await bucketsOf(hub)).toEqual(BUCKETS);
    expect(await bucketsOf(leaf)).toEqual([]);
    // The same buckets, seen from the leaf through the domain.
    expect(await bucketsOf(leaf, domains.domain)).toEqual(BUCKETS);
  });

  it("claims, refuses and releases through the domain", async () => {
    await claimAndRelease(store, leaf, domains.domain);
  });
});

describe("state through an API prefix (another account's JetStream)", () => {
  let imported: NatsImportedJetStream;
  let store: StateStore;
  let owner: NatsConnection;

  beforeAll(async () => {
    imported = await startNatsImportedJetStream();
    const { apiPrefix, inboxPrefix } = imported;
    store = await openStateStore(imported.server.url, { nats: { apiPrefix, inboxPrefix } });
    owner = await connect({ servers: imported.server.url, ...imported.ownerUser });
  });

  afterAll(async () => {
    await store?.close();
    await owner?.close();
    await imported?.dispose();
  });

  it("keeps the buckets in the owning account's JetStream", async () => {
    expect(await bucketsOf(owner)).toEqual(BUCKETS);
  });

  it("claims, refuses and releases through the prefix", async () => {
    await claimAndRelease(store, owner);
  });
});
