// Reconnects: nats-server stops and comes back mid-run (same port, same store directory).
// While it is away, reads and claims report StateUnavailable (never an empty world) and the
// capacity watch says "unavailable". After it is back the watches return by themselves, claims
// resume, and no decision after the outage reads a copy proven current before it, or older
// than 200 ms.
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import { openStateStore, type StateStore } from "../../src/state/store.js";
import { NatsServer } from "../helpers/nats-server.js";
import { providerState } from "../helpers/state-fixtures.js";

interface Outcome {
  at: number;
  kind: string;
  confirmedAt: number;
  viewAgeMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("restart: the server goes away and comes back", () => {
  let server: NatsServer;
  let store: StateStore;

  beforeAll(async () => {
    server = await NatsServer.start();
    store = await openStateStore(server.url, { nats: { reconnectWaitMs: 100 }, catchUpTimeoutMs: 1000 });
    await store.providerWriter.publish(providerState("gpu", { totalVramMiB: 16384, lastProbedAt: "" }));
  });

  afterAll(async () => {
    await store?.close();
    await server?.dispose();
  });

  it("claims resume after a restart and never decide on pre-outage state", async () => {
    const outcomes: Outcome[] = [];
    let running = true;
    const claimer = async (i: number) => {
      while (running) {
        try {
          const r = await store.tickets.claim({
            provider: "gpu",
            model: `m${i % 3}`,
            modelFootprintMiB: 7000,
          });
          outcomes.push({
            at: performance.now(),
            kind: r.ok ? "ok" : r.reason,
            confirmedAt: r.stats.confirmedAt,
            viewAgeMs: r.stats.viewAgeMs,
          });
          if (r.ok) {
            await sleep(5);
            await store.tickets.release(r.ticket).catch(() => undefined);
          } else await sleep(5);
        } catch (err) {
          outcomes.push({
            at: performance.now(),
            kind: `error:${(err as KubemootError).code}`,
            confirmedAt: 0,
            viewAgeMs: 0,
          });
          await sleep(20);
        }
      }
    };
    const claimers = Array.from({ length: 8 }, (_, i) => claimer(i));
    await sleep(800);

    // Down once the server's process has exited: until then it may still answer.
    const tStop = performance.now();
    await server.stop();
    const tDown = performance.now();
    console.log(`restart: stopping took ${(tDown - tStop).toFixed(0)} ms`);
    await sleep(300);
    const unavailable = (e: unknown) => KubemootError.is(e, ErrorCode.StateUnavailable);
    await expect(store.providers.list()).rejects.toSatisfy(unavailable);
    await expect(store.tickets.tickets("gpu")).rejects.toSatisfy(unavailable);
    await expect(store.demand.snapshot()).rejects.toSatisfy(unavailable);
    await expect(
      store.tickets.claim({ provider: "gpu", model: "x", modelFootprintMiB: 1 }),
    ).rejects.toSatisfy(unavailable);
    expect((await store.capacity.awaitChange(store.capacity.counter, Date.now() + 1000)).kind).toBe(
      "unavailable",
    );
    expect(store.available).toBe(false);
    await sleep(500);

    const tRestart = performance.now();
    await server.restart();
    const tUp = performance.now();
    // Watches come back by themselves.
    const deadline = performance.now() + 10_000;
    while (!store.available && performance.now() < deadline) await sleep(20);
    expect(store.available).toBe(true);
    expect((await store.providers.list()).map((s) => s.name)).toEqual(["gpu"]);
    await sleep(1200);
    running = false;
    await Promise.all(claimers);

    const before = outcomes.filter((o) => o.at < tDown && o.kind === "ok");
    const during = outcomes.filter((o) => o.at > tDown + 50 && o.at < tRestart);
    const after = outcomes.filter((o) => o.at > tUp && !o.kind.startsWith("error"));
    console.log(
      `restart: ${before.length} granted before, ${during.length} outcomes while down ` +
        `(${new Set(during.map((o) => o.kind)).size} kinds), ${after.filter((o) => o.kind === "ok").length} granted after; ` +
        `restart took ${(tUp - tRestart).toFixed(0)} ms`,
    );
    expect(before.length).toBeGreaterThan(0);
    // While down: only "unavailable", never a decision.
    expect(during.length).toBeGreaterThan(0);
    expect([...new Set(during.map((o) => o.kind))]).toEqual([`error:${ErrorCode.StateUnavailable}`]);
    // After: claims resume, on state proven current after the outage and at most 200 ms old.
    expect(after.filter((o) => o.kind === "ok").length).toBeGreaterThan(10);
    const decisions = outcomes
      .filter((o) => !o.kind.startsWith("error"))
      .map((o) => ({ ...o, decidedAt: o.confirmedAt + o.viewAgeMs }));
    // No decision while the server was away (the first 50 ms: requests already in flight).
    expect(decisions.filter((o) => o.decidedAt > tDown + 50 && o.decidedAt < tRestart)).toEqual([]);
    // Every decision after the restart read a copy proven current after the restart.
    expect(decisions.filter((o) => o.decidedAt >= tRestart && o.confirmedAt < tRestart)).toEqual([]);
    expect(decisions.filter((o) => o.viewAgeMs > 200)).toEqual([]);
  });

  it("reports StateUnavailable when no server answers at all", async () => {
    const t0 = performance.now();
    await expect(openStateStore("nats://127.0.0.1:1", { nats: { connectTimeoutMs: 500 } })).rejects.toSatisfy(
      (e) => KubemootError.is(e, ErrorCode.StateUnavailable),
    );
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});
