// Crash safety without a reaper: a sidecar process holding tickets is SIGKILLed (no release);
// its room becomes claimable again when the tickets' lease passes (+ the small lease grace).
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ticket } from "../../src/core/shapes.js";
import { openStateStore, type StateStore } from "../../src/state/store.js";
import { killWorker, startWorker } from "../helpers/contention/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { providerState } from "../helpers/state-fixtures.js";

const LEASE_MS = 3000;
const GRACE_MS = 1000; // the store's default lease grace

describe("crash: a holder dies", () => {
  let server: NatsServer;
  let store: StateStore;

  beforeAll(async () => {
    server = await NatsServer.start();
    store = await openStateStore(server.url, { holderId: "survivor" });
    // usable 14336: two 7000 MiB loads fill it.
    await store.providerWriter.publish(providerState("gpu", { totalVramMiB: 16384, lastProbedAt: "" }));
  });

  afterAll(async () => {
    await store?.close();
    await server?.dispose();
  });

  it("the room is claimable again within the lease after SIGKILL", async () => {
    const w = startWorker<{ held: Ticket[] }>({
      id: "holder",
      mode: "hold",
      servers: server.url,
      leaseMs: LEASE_MS,
      claims: [
        { provider: "gpu", model: "m1", modelFootprintMiB: 7000 },
        { provider: "gpu", model: "m2", modelFootprintMiB: 7000 },
      ],
    });
    const { held } = await w.done;
    expect(held.length).toBe(2);
    await killWorker(w);
    const killedAt = Date.now();
    const expiresAt = Math.max(...held.map((t) => t.expiresAt!));
    expect(expiresAt - killedAt).toBeLessThanOrEqual(LEASE_MS);

    // Still held: the dead holder's tickets count until their lease passes.
    const early = await store.tickets.claim({ provider: "gpu", model: "m3", modelFootprintMiB: 7000 });
    expect(early).toMatchObject({ ok: false, reason: "no-room" });

    const t0 = performance.now();
    let granted: Date | null = null;
    while (performance.now() - t0 < LEASE_MS + GRACE_MS + 3000) {
      const r = await store.tickets.claim({ provider: "gpu", model: "m3", modelFootprintMiB: 7000 });
      if (r.ok) {
        granted = new Date();
        break;
      }
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(granted).not.toBeNull();
    const at = granted!.getTime();
    // Not before the lease passed, and no later than lease + grace (+ scheduling slack).
    expect(at).toBeGreaterThanOrEqual(Math.min(...held.map((t) => t.expiresAt!)));
    expect(at - expiresAt).toBeLessThanOrEqual(GRACE_MS + 500);
    expect(at - killedAt).toBeLessThanOrEqual(LEASE_MS + GRACE_MS + 500);
  });
});
