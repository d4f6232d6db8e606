// Properties of placeFleet over random fleets: the result does not depend on the order of the
// inputs, and what it places never needs more than a pool has (nodes without a report; free
// devices per driver, and nodes, with one).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cluster, GPU_DRIVER, gpu, pool, replica } from "../../test/fleet/fixtures.js";
import { toDryRun } from "./dry-run.js";
import { placeFleet } from "./place.js";
import type { Engine, FleetInput, GpuPool, InferenceCluster, Member, ModelDeployment } from "./types.js";

const H200 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"';

const poolArb = (name: string, withReport: boolean) =>
  fc
    .record({
      nodes: fc.integer({ min: 0, max: 4 }),
      count: fc.integer({ min: 1, max: 8 }),
      h200: fc.boolean(),
      report: withReport ? fc.boolean() : fc.constant(false),
      free: fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 4 }),
    })
    .map(({ nodes, count, h200, report, free }): GpuPool => {
      const devices = [
        gpu({ count, attributes: { productName: { string: h200 ? "NVIDIA H200" : "NVIDIA H100" } } }),
      ];
      if (!report) return pool(name, { nodes, devices });
      const observed = free.slice(0, nodes).map((f) => Math.min(f, count));
      return pool(name, {
        nodes,
        observedNodes: observed.length,
        nodesByFreeDevices: observed.map((f) => ({ freeDevices: { [GPU_DRIVER]: f }, nodes: 1 })),
        devices,
      });
    });

const clusterArb = (name: string, withReport: boolean) =>
  fc
    .record({
      pools: fc
        .integer({ min: 1, max: 3 })
        .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => poolArb(`p${i}`, withReport)))),
      tier: fc.constantFrom("prod", "dev"),
    })
    .map(({ pools, tier }): InferenceCluster => cluster(name, { labels: { tier }, pools }));

const memberArb: fc.Arbitrary<Member[]> = fc.oneof(
  fc
    .record({ count: fc.integer({ min: 1, max: 4 }), h200: fc.boolean() })
    .map(({ count, h200 }) => [
      { role: "Standalone" as const, devices: [{ name: "gpu", count, selectors: h200 ? [H200] : [] }] },
    ]),
  fc
    .record({ count: fc.integer({ min: 1, max: 8 }), nodes: fc.integer({ min: 1, max: 2 }) })
    .map(({ count, nodes }) => [
      { role: "Leader" as const, devices: [{ name: "gpu", count, selectors: [] }] },
      { role: "Worker" as const, workerNodes: nodes, devices: [{ name: "gpu", count, selectors: [] }] },
    ]),
);

const deploymentArb = (name: string) =>
  fc
    .record({
      replicas: fc.integer({ min: 1, max: 5 }),
      tier: fc.constantFrom(undefined, "prod"),
      engines: fc.array(fc.record({ copies: fc.integer({ min: 1, max: 2 }), members: memberArb }), {
        minLength: 1,
        maxLength: 2,
      }),
    })
    .map(
      ({ replicas, tier, engines }): ModelDeployment => ({
        namespace: "ns",
        name,
        replicas,
        clusterSelector: tier ? { tier } : {},
        tolerations: [],
        engines: engines.map((e, i): Engine => ({ name: `e${i}`, ...e })),
      }),
    );

const fleetArb = (withReport: boolean) =>
  fc
    .record({
      clusters: fc.tuple(
        clusterArb("a", withReport),
        clusterArb("b", withReport),
        clusterArb("c", withReport),
      ),
      deployments: fc.tuple(deploymentArb("d0"), deploymentArb("d1"), deploymentArb("d2")),
      existing: fc.array(
        fc.record({
          owner: fc.constantFrom("d0", "d1", "foreign"),
          cluster: fc.constantFrom("a", "b", "c", "gone"),
          index: fc.integer({ min: 0, max: 5 }),
          pool: fc.constantFrom("p0", "p1", "p2"),
        }),
        { maxLength: 5 },
      ),
    })
    .map(
      ({ clusters, deployments, existing }): FleetInput => ({
        clusters,
        deployments,
        replicas: existing.map((e) => replica(e.owner, e.cluster, e.index, { pool: e.pool })),
      }),
    );

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("placeFleet properties", () => {
  it("the result is independent of input order", () => {
    fc.assert(
      fc.property(fleetArb(true), fc.integer(), (input, seed) => {
        const a = toDryRun(placeFleet(input));
        const b = toDryRun(
          placeFleet({
            clusters: shuffled(input.clusters, seed),
            deployments: shuffled(input.deployments, seed + 1),
            replicas: shuffled(input.replicas, seed + 2),
          }),
        );
        expect(b).toEqual(a);
      }),
      { numRuns: Number(process.env.FLEET_PROPERTY_RUNS ?? 150) },
    );
  });

  it("never churns: reconciling its own output again keeps every replica where it is", () => {
    fc.assert(
      fc.property(fleetArb(true), (input) => {
        const first = placeFleet(input);
        const emitted = first.deployments.flatMap((d) => d.replicas);
        // What the operator then observes: what it emitted (the rest of ours was deleted), and
        // the replicas of deployments it does not own.
        const ours = new Set(input.deployments.map((d) => d.name));
        const foreign = input.replicas.filter((r) => !ours.has(r.deployment ?? ""));
        const second = placeFleet({ ...input, replicas: [...foreign, ...emitted] });
        const where = (r: {
          name: string;
          clusterName: string;
          engines: { members: { nodePoolName: string }[] }[];
        }) =>
          `${r.name}@${r.clusterName}:${r.engines.map((e) => e.members.map((m) => m.nodePoolName).join("+")).join(",")}`;
        const again = new Map(second.deployments.flatMap((d) => d.replicas).map((r) => [r.name, r]));
        // Every emitted replica is kept, where it was.
        for (const r of emitted) {
          const kept = again.get(r.name);
          expect(kept && where(kept)).toBe(where(r));
          expect(kept?.retained).toBe(true);
        }
        // Nothing else changes, except that a deployment the first reconcile left short may
        // gain replicas: the ledger charges kept replicas in name order, and how pods pack onto
        // nodes depends on that order (found by this property: a foreign replica charged first
        // in one reconcile and after ours in the next), so the next reconcile can find room the
        // previous one did not. Growing is not churn; moving would be.
        for (const d of second.deployments) {
          const before = first.deployments.find((x) => x.namespace === d.namespace && x.name === d.name)!;
          if (d.replicas.length > before.replicas.length) {
            expect(before.conditions[0]?.status).toBe("False");
            expect(d.replicas.length).toBeLessThanOrEqual(
              input.deployments.find((x) => x.name === d.name)!.replicas,
            );
          } else {
            expect(d.replicas.length).toBe(before.replicas.length);
          }
        }
      }),
      { numRuns: 100 },
    );
  });

  it("never charges a pool beyond its capacity", () => {
    fc.assert(
      fc.property(fleetArb(true), (input) => {
        const result = placeFleet({ ...input, replicas: [] });
        // pods and devices per (cluster, pool), counted independently of the ledger
        const pods = new Map<string, number>();
        const devices = new Map<string, number>();
        for (const d of result.deployments) {
          for (const r of d.replicas) {
            for (const e of r.engines) {
              for (const m of e.members) {
                const perPod = m.deviceRequests.reduce((n, q) => n + q.count, 0);
                if (perPod === 0) continue;
                const key = `${r.clusterName}/${m.nodePoolName}`;
                const n = (m.role === "Worker" ? m.workerNodes! : 1) * e.copies;
                pods.set(key, (pods.get(key) ?? 0) + n);
                devices.set(key, (devices.get(key) ?? 0) + n * perPod);
              }
            }
          }
        }
        for (const c of input.clusters) {
          for (const p of c.pools) {
            const key = `${c.name}/${p.name}`;
            const usedPods = pods.get(key) ?? 0;
            const usedDevices = devices.get(key) ?? 0;
            if (!p.nodesByFreeDevices) {
              expect([key, usedPods <= p.nodes]).toEqual([key, true]);
            } else {
              const perNode = p.devices[0]!.count;
              const observed = p.nodesByFreeDevices.reduce((n, b) => n + b.nodes, 0);
              const free =
                p.nodesByFreeDevices.reduce((n, b) => n + (b.freeDevices[GPU_DRIVER] ?? 0) * b.nodes, 0) +
                Math.max(0, p.nodes - observed) * perNode;
              expect([key, usedDevices <= free]).toEqual([key, true]);
            }
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it("without reports, counting is whole nodes: one claiming pod per node, whatever the GPU count", () => {
    fc.assert(
      fc.property(fleetArb(false), (input) => {
        const result = placeFleet({ ...input, replicas: [] });
        // The same fleet with every device eight times larger places exactly the same replicas:
        // in whole-node counting only nodes matter once a request matches.
        const bigger = input.clusters.map((c) => ({
          ...c,
          pools: c.pools.map((p) => ({ ...p, devices: p.devices.map((d) => ({ ...d, count: 64 })) })),
        }));
        const smallest = Math.min(...input.clusters.flatMap((c) => c.pools.map((p) => p.devices[0]!.count)));
        const maxAsk = Math.max(
          ...input.deployments.flatMap((d) =>
            d.engines.flatMap((e) => e.members.map((m) => m.devices?.[0]?.count ?? 0)),
          ),
        );
        fc.pre(smallest >= maxAsk); // every request matches every pool in both fleets
        expect(toDryRun(placeFleet({ ...input, clusters: bigger, replicas: [] }))).toEqual(toDryRun(result));
      }),
      { numRuns: 50 },
    );
  });
});
