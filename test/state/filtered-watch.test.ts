// Filtered watches on a real nats-server (docs/rules/state.md §10.1): a store that follows the
// tickets of its candidates' providers only receives no update of any other provider, sees a
// provider's tickets as soon as one of its models becomes a candidate or the provider starts
// offering one, and still claims correctly on a provider it did not follow before.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usableMiB } from "../../src/core/index.js";
import { agentHolderId, openStateStore, type StateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { providerState } from "../helpers/state-fixtures.js";
import { waitUntil } from "../helpers/wait-until.js";

const PROVIDERS = ["gpu-0", "gpu-1", "gpu-2", "rack.gpu-3"];
const modelOf = (p: string) => `m-${p}`;

describe("a store following its candidates' providers", () => {
  let server: NatsServer;
  let fleet: StateStore;
  let sidecar: StateStore;

  beforeAll(async () => {
    server = await NatsServer.start();
    fleet = await openStateStore(server.url, { holderId: agentHolderId("other/x", 1) });
    for (const p of PROVIDERS) {
      await fleet.providerWriter.publish(
        providerState(p, { totalVramMiB: 81920, availableModelFootprintsMiB: { [modelOf(p)]: 1000 } }),
      );
    }
    sidecar = await openStateStore(server.url, {
      holderId: agentHolderId("crew/a1", 2),
      ticketsScope: "candidates",
    });
  });

  afterAll(async () => {
    await sidecar?.close();
    await fleet?.close();
    await server?.dispose();
  });

  /** Tickets the sidecar's copies hold, per provider. */
  async function seen(models: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const t of (await sidecar.tickets.everything(models)).tickets)
      out.set(t.provider, (out.get(t.provider) ?? 0) + 1);
    return out;
  }

  async function claim(store: StateStore, provider: string) {
    const r = await store.tickets.claim({ provider, model: modelOf(provider), modelFootprintMiB: 1000 });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    return r;
  }

  it("receives no update of a provider outside its candidates, and every one inside", async () => {
    expect(await seen([modelOf("gpu-1")])).toEqual(new Map());
    const before = sidecar.capacity.counter;
    for (let i = 0; i < 10; i++) await claim(fleet, "gpu-0");
    await claim(fleet, "rack.gpu-3");
    // The fleet store has seen its own writes; give the sidecar's watches time to deliver.
    await new Promise((r) => setTimeout(r, 300));
    expect(sidecar.capacity.counter).toBe(before);
    await claim(fleet, "gpu-1");
    await waitUntil(() => sidecar.capacity.counter > before);
    expect(await seen([modelOf("gpu-1")])).toEqual(new Map([["gpu-1", 1]]));
  });

  it("sees a provider's tickets as soon as one of its models becomes a candidate", async () => {
    expect(await seen([modelOf("gpu-1"), modelOf("gpu-0")])).toEqual(
      new Map([
        ["gpu-1", 1],
        ["gpu-0", 10],
      ]),
    );
    expect(await seen([modelOf("rack.gpu-3")])).toEqual(
      new Map([
        ["gpu-1", 1],
        ["gpu-0", 10],
        ["rack.gpu-3", 1],
      ]),
    );
  });

  it("follows a provider once its state offers a candidate model", async () => {
    const m = modelOf("gpu-1");
    await claim(fleet, "gpu-2");
    const without = await seen([m]);
    expect(without.has("gpu-2")).toBe(false);
    await fleet.providerWriter.publish(
      providerState("gpu-2", {
        totalVramMiB: 81920,
        availableModelFootprintsMiB: { [modelOf("gpu-2")]: 1000, [m]: 1000 },
      }),
    );
    await waitUntil(
      async () => (await sidecar.providers.get("gpu-2"))?.availableModelFootprintsMiB[m] === 1000,
    );
    expect((await seen([m])).get("gpu-2")).toBe(1);
  });

  it("claims on a provider it never followed judge that provider's whole state", async () => {
    const fresh = await openStateStore(server.url, {
      holderId: agentHolderId("crew/a2", 3),
      ticketsScope: "candidates",
    });
    try {
      // gpu-0's fleet tickets load m-gpu-0 (1000 MiB, counted once) and a big model that
      // leaves 500 MiB: a claim that did not read them would fit 1000 MiB more.
      const big = usableMiB(81920) - 1000 - 500;
      const b = await fleet.tickets.claim({ provider: "gpu-0", model: "big", modelFootprintMiB: big });
      expect(b.ok).toBe(true);
      const r = await fresh.tickets.claim({ provider: "gpu-0", model: "other", modelFootprintMiB: 1000 });
      expect(r).toMatchObject({ ok: false, reason: "no-room" });
      const ok = await fresh.tickets.claim({ provider: "gpu-0", model: "small", modelFootprintMiB: 400 });
      expect(ok.ok).toBe(true);
    } finally {
      await fresh.close();
    }
  });
});
