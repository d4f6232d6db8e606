// Leader election on a coordination.k8s.io/v1 Lease through @kubernetes/client-node, against the
// FAKE API server (no kube-apiserver can run here; it checks resourceVersion on PUT like kube).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { kubeConfigForServer } from "../../src/operator/kube/index.js";
import { LeaderElector } from "../../src/operator/kube/leader.js";
import { FakeApiServer } from "./fake-apiserver/index.js";
import { sleep, waitFor } from "./helpers.js";

const LEASE = { namespace: "kubemoot", name: "kubemoot-leader" };

describe("leader election (against the FAKE API server)", () => {
  let fake: FakeApiServer;
  const electors: LeaderElector[] = [];
  const elector = (identity: string, leaseDurationS = 2) => {
    const e = new LeaderElector({
      kubeConfig: kubeConfigForServer(fake.url),
      ...LEASE,
      identity,
      leaseDurationS,
      retryMs: 50,
    });
    electors.push(e);
    return e;
  };
  beforeEach(async () => {
    fake = await FakeApiServer.start();
  });
  afterEach(async () => {
    for (const e of electors.splice(0)) await e.stop();
    await fake.close();
  });

  it("one leader at a time; a standby takes over when the leader releases", async () => {
    const a = elector("pod-a");
    const b = elector("pod-b");
    expect(await a.acquire(() => undefined)).toBe(true);
    let bWon = false;
    const waiting = b
      .acquire(() => undefined)
      .then((won) => {
        bWon = won;
      });
    await sleep(300);
    expect(bWon).toBe(false);
    expect(b.isLeader).toBe(false);
    const lease = fake.get("coordination.k8s.io/v1", "Lease", LEASE.namespace, LEASE.name);
    expect((lease?.spec as { holderIdentity: string } | undefined)?.holderIdentity).toBe("pod-a");

    await a.stop(); // releases
    await waiting;
    expect(bWon).toBe(true);
    const after = fake.get("coordination.k8s.io/v1", "Lease", LEASE.namespace, LEASE.name)?.spec as {
      holderIdentity: string;
      leaseTransitions: number;
    };
    expect(after.holderIdentity).toBe("pod-b");
    expect(after.leaseTransitions).toBe(1);
  });

  it("a standby takes over an expired lease (the leader died without releasing)", async () => {
    fake.apply({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: LEASE,
      spec: {
        holderIdentity: "dead-pod",
        leaseDurationSeconds: 1,
        renewTime: new Date(Date.now() - 5000).toISOString(),
      },
    });
    const b = elector("pod-b");
    expect(await b.acquire(() => undefined)).toBe(true);
  });

  it("a leader that cannot renew within its lease gives leadership up", async () => {
    const a = elector("pod-a", 1);
    let lost = false;
    expect(
      await a.acquire(() => {
        lost = true;
      }),
    ).toBe(true);
    // Another writer takes the lease meanwhile (as after a network partition): a's renewals conflict.
    fake.apply({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: LEASE,
      spec: { holderIdentity: "pod-z", leaseDurationSeconds: 60, renewTime: new Date().toISOString() },
    });
    await waitFor(() => lost, "leadership lost", 5000);
    expect(a.isLeader).toBe(false);
  });
});

describe("the operator with leader election (against the FAKE API server)", () => {
  it("a standby is live but not ready until the leader stops", async () => {
    const { createServer } = await import("node:net");
    const { pino } = await import("pino");
    const { startOperator } = await import("../../src/operator/index.js");
    const { openStateStore } = await import("../../src/state/index.js");
    const freePort = () =>
      new Promise<number>((resolve) => {
        const s = createServer().listen(0, "127.0.0.1", () => {
          const port = (s.address() as { port: number }).port;
          s.close(() => resolve(port));
        });
      });
    const fake = await FakeApiServer.start();
    const state = await openStateStore("memory");
    const common = {
      manifests: [],
      bindingsDir: "/nonexistent",
      state,
      logger: pino({ level: "silent" }),
      probeIntervalMs: 60_000,
      kubeConfig: kubeConfigForServer(fake.url),
    };
    const lease = (identity: string) => ({ ...LEASE, identity, leaseDurationS: 2 });
    const a = await startOperator({
      ...common,
      leaderElection: lease("pod-a"),
      health: { host: "127.0.0.1", port: 0 },
    });
    const bPort = await freePort();
    const bStarting = startOperator({
      ...common,
      leaderElection: lease("pod-b"),
      health: { host: "127.0.0.1", port: bPort },
    });
    try {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${bPort}/healthz`).catch(() => undefined))?.ok,
        "b live",
      );
      expect((await fetch(`http://127.0.0.1:${bPort}/readyz`)).status).toBe(503);
      expect((await fetch(`http://127.0.0.1:${a.health!.port}/readyz`)).status).toBe(200);
      await a.stop();
      const b = await bStarting;
      expect((await fetch(`http://127.0.0.1:${bPort}/readyz`)).status).toBe(200);
      await b.stop();
    } finally {
      await state.close();
      await fake.close();
    }
  });
});
