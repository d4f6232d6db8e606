// Least-privilege NATS (docs/deploy.md "NATS credentials"): a real nats-server runs with exactly
// the users the chart renders (helm template, the nats-authorization Secret), nkeys generated
// here. The operator's user creates the buckets and publishes provider state; a real sidecar
// process with the sidecar's user places, waits, renews and releases through a grpc-js client;
// the sidecar's user, through the same state layer, claims and watches (also across a server
// restart); and the server refuses it every write to provider state and every bucket it may
// not touch. A missing nats-server (or helm) fails the suite with instructions.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect, nkeyAuthenticator, nkeys } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import { ProviderPublisher } from "../../src/publisher/index.js";
import {
  agentHolderId,
  bucketSettings,
  DISCUSSION_EVENTS_FILTER,
  type DiscussionBinding,
  DiscussionBindings,
  encodeDiscussionEvent,
  MODEL_DEMAND_BUCKET,
  openStateStore,
  type StateStore,
} from "../../src/state/index.js";
import { renderChart } from "../chart/render.js";
import { type Json, type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { providerState } from "../helpers/state-fixtures.js";
import { waitUntil } from "../helpers/wait-until.js";

interface User {
  nkey: string;
  seed: string;
  seedFile: string;
}

const dir = mkdtempSync(path.join(os.tmpdir(), "kubemoot-nats-perm-"));
function newUser(name: string): User {
  const kp = nkeys.createUser();
  const seed = new TextDecoder().decode(kp.getSeed());
  const seedFile = path.join(dir, `${name}.nk`);
  writeFileSync(seedFile, `${seed}\n`, { mode: 0o600 });
  return { nkey: kp.getPublicKey(), seed, seedFile };
}

/** The server's `authorization` block exactly as the chart renders it for these users. */
function chartAuthorization(operator: User, sidecar: User): string {
  const objects = renderChart({
    includeCrds: false,
    set: [
      "nats.auth.enabled=true",
      `nats.auth.operator.nkey=${operator.nkey}`,
      `nats.auth.sidecars[0].nkey=${sidecar.nkey}`,
      "nats.auth.sidecars[0].namespaces={crew}",
    ],
  });
  const secret = objects.find((o) => o.kind === "Secret" && o.metadata.name.endsWith("-nats-authorization"));
  const conf = (secret?.stringData as Record<string, string> | undefined)?.["authorization.conf"];
  if (!conf) throw new Error("the chart rendered no nats-authorization Secret with authorization.conf");
  return conf;
}

const operatorUser = newUser("operator");
const sidecarUser = newUser("sidecar");
let nats: NatsServer;
let operatorStore: StateStore;
/** The discussion bindings as the operator opens them at start (creating the bucket). */
let operatorBindings: DiscussionBindings;
let publisher: ProviderPublisher;
let emulator: EmulatorHandle;
let sidecar: SidecarProcess;
let client: SchedulerClient;

/** The server's log line for a refused publish. */
function violation(subject: string): RegExp {
  return new RegExp(`Publish Violation - Nkey "U[A-Z2-7]+", Subject "${subject.replace(/[$.]/g, "\\$&")}"`);
}

/** A conversation record as a sidecar of crew publishes it (docs/rules/state.md §2.4). */
const conversation = {
  provider: "solo",
  model: "qwen3:14b",
  key: "k3yOfAConversation_0123",
  namespace: "crew",
  tokens: 5200,
  atMs: Date.UTC(2026, 0, 1),
  prefixes: [{ hash: "s4ltedPrefixHash_012345", tokens: 1500 }],
};

function cands(...list: [string, number][]): Json[] {
  return list.map(([model, score]) => ({ model, score }));
}

async function liveTickets(): Promise<number> {
  let n = 0;
  for (const list of (await operatorStore.tickets.allTickets()).values()) n += list.length;
  return n;
}

beforeAll(async () => {
  nats = await NatsServer.start({ config: chartAuthorization(operatorUser, sidecarUser) });
  // Buckets are the operator's to create: it opens the state first.
  operatorStore = await openStateStore(nats.url, { nats: { credsFile: operatorUser.seedFile } });
  operatorBindings = await DiscussionBindings.open(operatorStore.kv);
  emulator = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24563,
    models: { "qwen3:14b": 9000, "big:20b": 14000 },
    contextLength: 8192,
    numParallel: 1,
    timeScale: 0.01,
  });
  publisher = new ProviderPublisher({ sink: operatorStore.providerWriter, intervalMs: 60_000 });
  publisher.start();
  await publisher.setProviders([
    { name: "solo", endpoint: emulator.url, totalVramMiB: 24563, maxParallel: 1, contextLength: 8192 },
  ]);
  const res = await fetch(`${emulator.url}/api/generate`, {
    method: "POST",
    body: JSON.stringify({ model: "qwen3:14b", options: { num_ctx: 8192 } }),
  });
  await res.text();
  await publisher.probeNow();
  sidecar = await startSidecarProcess(["--nats", nats.url, "--agent", "crew/a1", "--proxy-listen", ""], {
    KUBEMOOT_NATS_CREDS: sidecarUser.seedFile,
  });
  client = schedulerClient(sidecar.apiAddress);
}, 60_000);

afterAll(async () => {
  client?.close();
  const code = await sidecar?.stop();
  await publisher?.stop();
  await emulator?.close();
  operatorBindings?.close();
  await operatorStore?.close();
  await nats?.dispose();
  rmSync(dir, { recursive: true, force: true });
  expect(code, sidecar?.output()).toBe(0);
});

describe("least-privilege NATS users (as the chart renders them)", () => {
  it("a sidecar process with the sidecar's user places, renews, waits and releases", async () => {
    const busy = await client.call("Place", { agent: "crew/a1", candidates: cands(["qwen3:14b", 60]) });
    expect(busy.result, JSON.stringify(busy)).toBe("placement");
    expect(busy.placement.provider).toBe("solo");
    const renewed = await client.call("Renew", { ticketId: busy.placement.ticketId });
    expect(Number(renewed.expiresAtMs ?? renewed.leaseSeconds ?? 1)).toBeGreaterThan(0);
    // The operator's store sees the sidecar's ticket through its watch.
    await waitUntil(async () => (await liveTickets()) === 1);

    // big:20b cannot fit beside the busy 14b: the call waits for the 14b copy, and its wait is
    // published as demand (a sidecar write).
    const events: Json[] = [];
    const w = client.stream(
      "Wait",
      { agent: "crew/a1", candidates: cands(["big:20b", 65], ["qwen3:14b", 60]), limitSeconds: 30 },
      (m) => events.push(m),
    );
    await waitUntil(() => events.length >= 1);
    expect(events[0]!.event).toBe("waiting");
    await waitUntil(async () => (await operatorStore.demand.snapshot()).wait.length === 1);
    const r1 = await client.call("Release", {
      ticketId: busy.placement.ticketId,
      outcome: "CALL_OUTCOME_SUCCEEDED",
      latencyMs: 100,
    });
    expect(r1.released).toBe(true);
    const all = await w.done;
    expect(all.map((m) => m.event)).toEqual(["waiting", "placed"]);
    const r2 = await client.call("Release", {
      ticketId: all[1]!.placed.ticketId,
      outcome: "CALL_OUTCOME_SUCCEEDED",
      latencyMs: 100,
    });
    expect(r2.released).toBe(true);
    await waitUntil(async () => (await liveTickets()) === 0);
    await waitUntil(async () => (await operatorStore.demand.snapshot()).wait.length === 0);
    // Nothing the sidecar or the operator did was refused (a refused request could be retried
    // or ignored without failing the calls above).
    expect(nats.log()).not.toMatch(/Violation/);
  });

  describe("the state layer with the sidecar's user", () => {
    let store: StateStore;
    beforeAll(async () => {
      // Its tickets name its agent, in the namespace this user may write (docs/rules/state.md §2.4).
      store = await openStateStore(nats.url, {
        nats: { credsFile: sidecarUser.seedFile },
        holderId: agentHolderId("crew/a2", process.pid),
        openTimeoutMs: 3000,
      });
    });
    afterAll(async () => {
      await store?.close();
    });

    it("reads provider state, claims, renews, releases and writes every sidecar key", async () => {
      expect((await store.providers.get("solo"))?.endpoint).toBe(emulator.url);
      const r = await store.tickets.claim({ provider: "solo", model: "qwen3:14b", modelFootprintMiB: 9000 });
      expect(r.ok, JSON.stringify(r)).toBe(true);
      if (!r.ok) return;
      await store.tickets.renew(r.ticket);
      await store.tickets.writeResidency({
        provider: "solo",
        modelName: "qwen3:14b",
        modelFootprintMiB: 9000,
      });
      await store.tickets.markSuspect("solo", Date.now() - 60_000, "crew/a1");
      await store.tickets.writeConversation(conversation, "crew/a1");
      await waitUntil(async () => (await operatorStore.tickets.everything()).conversations.copies.size === 1);
      expect(
        [...(await operatorStore.tickets.everything()).conversations.copies.values()][0]?.byTime,
      ).toEqual([conversation]);
      await store.tickets.deleteConversation("solo", "crew/a1", conversation.key);
      await store.demand.putWait("qwen3:14b", "crew/a1");
      await store.demand.clearWait("qwen3:14b", "crew/a1");
      await store.tickets.release(r.ticket);
      // The writes reached the bucket: the operator's watch sees them.
      await waitUntil(async () => (await operatorStore.tickets.residencies("solo")).length === 1);
      await waitUntil(async () => (await liveTickets()) === 0);
      await waitUntil(async () => (await operatorStore.tickets.everything()).conversations.copies.size === 0);
      expect(nats.log()).not.toMatch(/Violation/);
    });

    it("reads the discussion bindings the operator writes, and may not write one", async () => {
      const bindings = await DiscussionBindings.open(store.kv);
      try {
        const value: DiscussionBinding = {
          v: 1,
          kind: "binding",
          thread: "t-perm",
          phase: "mulling",
          agent: "crew/a1",
          model: "qwen3:14b",
          provider: "solo",
          candidates: [{ model: "qwen3:14b", score: 60 }],
          reason: "bound to qwen3:14b on solo",
          revision: 1,
          boundAt: new Date().toISOString(),
        };
        await operatorBindings.publish(value);
        await waitUntil(() => bindings.get("t-perm", "mulling") !== undefined);
        expect(bindings.get("t-perm", "mulling")).toEqual(value);
        const before = nats.log().length;
        const err = await bindings.publish({ ...value, provider: "elsewhere", revision: 2 }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(String(err)).toMatch(/permission/i);
        await waitUntil(() =>
          violation("$KV.kubemoot_discussion_bindings.t-perm.mulling").test(nats.log().slice(before)),
        );
      } finally {
        bindings.close();
      }
    });

    it("publishes discussion events for its own namespace's agents only", async () => {
      const received: string[] = [];
      const stop = operatorStore.kv.messages.subscribe(DISCUSSION_EVENTS_FILTER, (subject) => {
        received.push(subject);
      });
      try {
        const before = nats.log().length;
        // Sent again until one arrives: the operator's subscription travels on its own connection,
        // so the server may see the sidecar's first publish before it (core NATS keeps nothing).
        // Each round sends the other namespace's first, so a leak would arrive first.
        const send = () => {
          for (const agent of ["elsewhere/a1", "crew/a1"]) {
            const m = encodeDiscussionEvent({ kind: "open", threadId: "t-perm-events", agent })!;
            store.kv.messages.publish(m.subject, m.data);
          }
        };
        await waitUntil(() => {
          if (received.length === 0) send();
          return received.length > 0;
        });
        await waitUntil(() =>
          violation("kubemoot.discussion.elsewhere.t-perm-events.open").test(nats.log().slice(before)),
        );
        expect(new Set(received)).toEqual(new Set(["kubemoot.discussion.crew.t-perm-events.open"]));
      } finally {
        stop();
      }
    });

    it("may not publish a conversation record in another namespace", async () => {
      const before = nats.log().length;
      const err = await store.tickets.writeConversation(conversation, "elsewhere/a1").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(err)).toMatch(/permission/i);
      await waitUntil(() =>
        violation(`$KV.kubemoot_provider_tickets.c.solo.elsewhere.${conversation.key}`).test(
          nats.log().slice(before),
        ),
      );
    });

    it("may not write provider state: the server refuses the put", async () => {
      const before = nats.log().length;
      const fake = providerState("solo", { endpoint: "http://127.0.0.1:9/steal" });
      const err = await store.providerWriter.publish(fake).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(KubemootError.is(err, ErrorCode.StateUnavailable), String(err)).toBe(true);
      expect(String((err as Error).message)).toMatch(/permission/i);
      await waitUntil(() => violation("$KV.kubemoot_provider_state.solo").test(nats.log().slice(before)));
      expect((await operatorStore.providers.get("solo"))?.endpoint).toBe(emulator.url);
    });

    it("may not create, delete or purge buckets", async () => {
      const before = nats.log().length;
      await expect(store.kv.bucket("kubemoot_other", bucketSettings()[MODEL_DEMAND_BUCKET]!)).rejects.toThrow(
        /may not open it \(\$JS\.API\.STREAM\.INFO\.KV_kubemoot_other\)/,
      );
      const nc = await connect({
        servers: nats.url,
        authenticator: nkeyAuthenticator(new TextEncoder().encode(sidecarUser.seed)),
      });
      try {
        for (const subject of [
          "$JS.API.STREAM.DELETE.KV_kubemoot_provider_state",
          "$JS.API.STREAM.PURGE.KV_kubemoot_provider_tickets",
          "$JS.API.STREAM.CREATE.KV_kubemoot_provider_state",
          "$KV.kubemoot_provider_state.solo",
        ]) {
          await expect(nc.request(subject, new Uint8Array(0), { timeout: 2000 }), subject).rejects.toThrow();
        }
      } finally {
        await nc.close();
      }
      const log = nats.log().slice(before);
      for (const subject of [
        "STREAM.DELETE.KV_kubemoot_provider_state",
        "STREAM.PURGE.KV_kubemoot_provider_tickets",
      ]) {
        expect(log).toMatch(violation(`$JS.API.${subject}`));
      }
      expect((await operatorStore.providers.get("solo"))?.endpoint).toBe(emulator.url);
    });
  });

  it("a sidecar's user cannot create missing buckets; it opens them once the operator has", async () => {
    const fresh = await NatsServer.start({ config: chartAuthorization(operatorUser, sidecarUser) });
    try {
      const early = await openStateStore(fresh.url, {
        nats: { credsFile: sidecarUser.seedFile },
        openTimeoutMs: 1000,
      }).then(
        async (s) => {
          await s.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(KubemootError.is(early, ErrorCode.StateUnavailable), String(early)).toBe(true);
      expect(String((early as Error).message)).toMatch(
        /may not create it .*the operator's user creates the buckets/,
      );
      const op = await openStateStore(fresh.url, { nats: { credsFile: operatorUser.seedFile } });
      const late = await openStateStore(fresh.url, { nats: { credsFile: sidecarUser.seedFile } });
      await late.close();
      await op.close();
    } finally {
      await fresh.dispose();
    }
  });

  it("after a server restart the sidecar's watches come back under the same permissions", async () => {
    const before = nats.log().length;
    await nats.restart();
    await publisher.probeNow();
    let placed: Json | undefined;
    await waitUntil(
      async () => {
        const r = await client
          .call("Place", { agent: "crew/a1", candidates: cands(["qwen3:14b", 60]) })
          .catch(() => undefined);
        if (r?.result === "placement") placed = r;
        return placed !== undefined;
      },
      15_000,
      "a placement after the restart",
    );
    const released = await client.call("Release", {
      ticketId: placed!.placement.ticketId,
      outcome: "CALL_OUTCOME_SUCCEEDED",
      latencyMs: 100,
    });
    expect(released.released).toBe(true);
    // The only refusals a reconnect may cause are deletes of the old watch consumers.
    const refused = [
      ...nats
        .log()
        .slice(before)
        .matchAll(/Publish Violation - .*Subject "([^"]+)"/g),
    ].map((m) => m[1]);
    expect(refused.filter((s) => !s!.startsWith("$JS.API.CONSUMER.DELETE.KV_"))).toEqual([]);
  }, 30_000);

  it("the operator's user may not write tickets or demand", async () => {
    // The server restarted in the test before: the operator's connection may still be on its
    // way back ("disconnected"), which says nothing about permissions yet.
    let err: unknown;
    await waitUntil(
      async () => {
        err = await operatorStore.demand.putWait("qwen3:14b", "crew/a1").then(
          () => undefined,
          (e: unknown) => e,
        );
        return !/disconnected|reconnect/i.test(String(err));
      },
      15_000,
      "the operator's connection back",
    );
    expect(String(err)).toMatch(/permission/i);
  });
});
