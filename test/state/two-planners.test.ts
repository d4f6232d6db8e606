// Two planners, one victim: two sidecars (separate NATS connections) plan a load on the same
// provider that needs the same idle victim's credit, at the same moment. Repeated 50×: never
// two winners (a victim's credit is spent once), and never none (progress).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStateStore, type StateStore } from "../../src/state/store.js";
import { NatsServer } from "../helpers/nats-server.js";
import { providerState } from "../helpers/state-fixtures.js";

describe("two planners, one victim", () => {
  let server: NatsServer;
  let a: StateStore;
  let b: StateStore;

  beforeAll(async () => {
    server = await NatsServer.start();
    a = await openStateStore(server.url, { holderId: "planner-a" });
    b = await openStateStore(server.url, { holderId: "planner-b" });
    // usable 14336; the idle victim takes 12000, so a 10000 MiB load needs its credit.
    await a.providerWriter.publish(
      providerState("gpu", {
        totalVramMiB: 16384,
        loadedModelFootprintsMiB: { victim: 12000 },
        lastProbedAt: "",
      }),
    );
    // b reads state at most 200 ms old: give it that long to see a's write.
    const deadline = Date.now() + 2000;
    while ((await b.providers.get("gpu")) === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await server?.dispose();
  });

  it("never lets two plans spend one victim (50 rounds)", async () => {
    for (let round = 0; round < 50; round++) {
      const [ra, rb] = await Promise.all([
        a.tickets.claim({
          provider: "gpu",
          model: "model-a",
          modelFootprintMiB: 10000,
          evicts: { victim: 12000 },
        }),
        b.tickets.claim({
          provider: "gpu",
          model: "model-b",
          modelFootprintMiB: 10000,
          evicts: { victim: 12000 },
        }),
      ]);
      const winners = [ra, rb].filter((r) => r.ok);
      expect(winners.length, `round ${round}`).toBe(1);
      const loser = [ra, rb].find((r) => !r.ok);
      expect(loser).toMatchObject({ ok: false, reason: "no-room" });
      const w = winners[0]!;
      if (w.ok) {
        expect(Object.keys(w.ticket.evicts)).toEqual(["victim"]);
        await (w === ra ? a : b).tickets.release(w.ticket);
      }
    }
  });

  it("refuses both plans while the victim has a live ticket (it picked up work)", async () => {
    const work = await a.tickets.claim({ provider: "gpu", model: "victim", modelFootprintMiB: 12000 });
    expect(work.ok).toBe(true);
    const [ra, rb] = await Promise.all([
      a.tickets.claim({
        provider: "gpu",
        model: "model-a",
        modelFootprintMiB: 10000,
        evicts: { victim: 12000 },
      }),
      b.tickets.claim({
        provider: "gpu",
        model: "model-b",
        modelFootprintMiB: 10000,
        evicts: { victim: 12000 },
      }),
    ]);
    expect(ra).toMatchObject({ ok: false, reason: "victim-busy", victim: "victim" });
    expect(rb).toMatchObject({ ok: false, reason: "victim-busy", victim: "victim" });
    if (work.ok) await a.tickets.release(work.ticket);
  });
});
