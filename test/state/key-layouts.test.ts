// Both key layouts on one real nats-server (docs/rules/state.md §2.4): a sidecar process writes
// its tickets in its layout's keys; processes of different layouts in one bucket read only their
// own layout's tickets (each skips the other's keys as foreign), which is why the migration
// drains first; and the documented switch-over (drain, change the layout, start again) leaves
// the new layout the whole room, with the provider state both share.
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usableMiB } from "../../src/core/index.js";
import {
  agentHolderId,
  type KeyLayoutName,
  openStateStore,
  PROVIDER_TICKETS_BUCKET,
  type StateStore,
} from "../../src/state/index.js";
import { type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";
import { NatsServer } from "../helpers/nats-server.js";
import { type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { providerState } from "../helpers/state-fixtures.js";

const TOTAL = 24576;
const USABLE = usableMiB(TOTAL);

describe("key layouts", () => {
  let server: NatsServer;
  let nc: NatsConnection;
  const stores: StateStore[] = [];

  beforeAll(async () => {
    server = await NatsServer.start();
    // The states are the same in both layouts; the scoped layout's operator also writes offer
    // keys, by which its sidecars follow their candidates' providers (docs/rules/state.md §2.1).
    const ops = [await open("kubemoot", "op/operator"), await open("scoped", "op/operator")];
    for (const op of ops)
      for (const name of ["rack.gpu-1", "gpu-mix", "gpu-switch"]) {
        await op.providerWriter.publish(
          providerState(name, {
            totalVramMiB: TOTAL,
            availableModelFootprintsMiB: {
              "qwen3:8b": 5000,
              big: USABLE - 1000,
              // Only rack.gpu-1 serves it: the sidecar processes' calls go there.
              ...(name === "rack.gpu-1" ? { solo: 3000 } : {}),
            },
          }),
        );
      }
    nc = await connect({ servers: server.url });
  });

  afterAll(async () => {
    for (const s of stores.splice(0)) await s.close();
    await nc?.close();
    await server?.dispose();
  });

  async function open(keyLayout: KeyLayoutName, agent: string): Promise<StateStore> {
    const s = await openStateStore(server.url, { keyLayout, holderId: agentHolderId(agent, process.pid) });
    stores.push(s);
    return s;
  }

  async function rawKeys(): Promise<string[]> {
    const kv = await new Kvm(nc).open(PROVIDER_TICKETS_BUCKET);
    const out: string[] = [];
    for await (const k of await kv.keys()) out.push(k);
    return out.sort();
  }

  it.each([
    ["scoped", {}, /^t\.rack_2egpu-1\.crew\.[0-9a-f-]{36}$/],
    ["kubemoot", { KUBEMOOT_KEY_LAYOUT: "kubemoot" }, /^rack\.gpu-1__[0-9a-f-]{36}$/],
  ] as const)(
    "a sidecar process with the %s layout writes its tickets under that layout's keys",
    async (_, env, key) => {
      let sidecar: SidecarProcess | undefined;
      let client: SchedulerClient | undefined;
      try {
        sidecar = await startSidecarProcess(
          ["--nats", server.url, "--agent", "crew/a1", "--proxy-listen", ""],
          env,
        );
        client = schedulerClient(sidecar.apiAddress);
        const before = new Set(await rawKeys());
        const r = await client.call("Place", {
          agent: "crew/a1",
          candidates: [{ model: "solo", score: 60 }],
        });
        expect(r.result, JSON.stringify(r)).toBe("placement");
        const added = (await rawKeys()).filter((k) => !before.has(k) && !/claim|^_/.test(k));
        expect(added).toHaveLength(1);
        expect(added[0]).toMatch(key);
        await client.call("Release", { ticketId: r.placement.ticketId, outcome: "CALL_OUTCOME_SUCCEEDED" });
      } finally {
        client?.close();
        await sidecar?.stop();
      }
    },
  );

  it("in one bucket, each layout reads only its own tickets (so a switch-over drains first)", async () => {
    const old = await open("kubemoot", "crew/old");
    const next = await open("scoped", "crew/new");
    const a = await old.tickets.claim({
      provider: "gpu-mix",
      model: "big",
      modelFootprintMiB: USABLE - 1000,
    });
    expect(a.ok).toBe(true);
    // The scoped store does not see the kubemoot ticket: it would grant what no longer fits.
    expect(await next.tickets.tickets("gpu-mix")).toEqual([]);
    expect((await old.tickets.tickets("gpu-mix")).map((t) => t.ticketId)).toEqual([
      a.ok ? a.ticket.ticketId : "",
    ]);
    if (a.ok) await old.tickets.release(a.ticket);
  });

  it("the switch-over: drain the old layout, start the new one, which has the whole room", async () => {
    const old = await open("kubemoot", "crew/old2");
    const held = await old.tickets.claim({
      provider: "gpu-switch",
      model: "qwen3:8b",
      modelFootprintMiB: 5000,
    });
    expect(held.ok).toBe(true);
    // Drain: the old layout's calls end (their tickets are released), then it stops.
    if (held.ok) await old.tickets.release(held.ticket);
    expect((await rawKeys()).filter((k) => k.startsWith("gpu-switch__"))).toEqual([]);
    const next = await open("scoped", "crew/new2");
    // The provider state written by the old deployment's operator is read as is.
    expect((await next.providers.get("gpu-switch"))?.totalVramMiB).toBe(TOTAL);
    const big = await next.tickets.claim({
      provider: "gpu-switch",
      model: "big",
      modelFootprintMiB: USABLE - 1000,
    });
    expect(big.ok, JSON.stringify(big)).toBe(true);
    const more = await next.tickets.claim({
      provider: "gpu-switch",
      model: "qwen3:8b",
      modelFootprintMiB: 5000,
    });
    expect(more).toMatchObject({ ok: false, reason: "no-room" });
    if (big.ok) await next.tickets.release(big.ticket);
  });
});
