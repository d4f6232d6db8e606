// placeFleet over the fleet rules (docs/rules/fleet.md), one small fleet per case: the ledger
// (what other replicas charge a pool) and counting free devices. Each case states what it expects
// as "cluster/index@pool" strings (test/fleet/place-helpers.ts), worked out from the rules.
import { describe, expect, it } from "vitest";
import {
  cluster,
  deployment,
  engine,
  GPU_DRIVER,
  gpu,
  pool,
  replica,
  standalone,
} from "../../test/fleet/fixtures.js";
import { place } from "../../test/fleet/place-helpers.js";
import { placeFleet } from "./place.js";
import type { InferenceCluster, ModelDeployment } from "./types.js";

describe("the ledger", () => {
  const one = [cluster("a", { pools: [pool("default", { nodes: 1 })] })];

  it("charges foreign replicas (of deployments not given)", () => {
    const r = place({ clusters: one, deployments: [deployment("m")], replicas: [replica("other", "a", 0)] });
    expect(r.m).toMatchObject({
      replicas: [],
      reason: "InsufficientCapacity",
      message: "0 of 1 replicas scheduled (checked 1 clusters)",
    });
  });

  it("charges other deployments' retained replicas, but not their dropped ones", () => {
    const other = deployment("other");
    const kept = place({
      clusters: one,
      deployments: [deployment("m"), other],
      replicas: [replica("other", "a", 0)],
    });
    expect(kept.m!.replicas).toEqual([]);
    const dropped = place({
      clusters: one,
      deployments: [deployment("m"), deployment("other", { engines: [engine({ copies: 2 })] })],
      replicas: [replica("other", "a", 0)],
    });
    // other's replica changed shape: dropped, so m (first by name) takes the node
    expect(dropped.m!.replicas).toEqual(["a/0@default"]);
    expect(dropped.other!.replicas).toEqual([]);
  });

  it("deployments placed earlier in the pass are charged for later ones", () => {
    const r = place({ clusters: one, deployments: [deployment("z"), deployment("a-first")] });
    expect([r["a-first"]!.replicas, r.z!.replicas]).toEqual([["a/0@default"], []]);
  });

  it("replicas on deleted pools or clusters charge nothing", () => {
    const r = place({
      clusters: one,
      deployments: [deployment("m")],
      replicas: [replica("other", "a", 0, { pool: "deleted" }), replica("other", "gone", 0)],
    });
    expect(r.m!.replicas).toEqual(["a/0@default"]);
  });

  it("claimless members cost nothing", () => {
    const free = replica("other", "a", 0);
    free.engines[0]!.members[0]!.deviceRequests = [];
    expect(place({ clusters: one, deployments: [deployment("m")], replicas: [free] }).m!.replicas).toEqual([
      "a/0@default",
    ]);
  });

  it("charges by the recorded shape, not the owner's current spec", () => {
    const reported = [
      cluster("a", {
        pools: [
          pool("default", {
            nodes: 1,
            observedNodes: 1,
            nodesByFreeDevices: [{ freeDevices: { [GPU_DRIVER]: 8 }, nodes: 1 }],
          }),
        ],
      }),
    ];
    const run = (count: number, copies: number) => {
      const r = replica("other", "a", 0, { count });
      r.engines[0]!.copies = copies;
      return place({
        clusters: reported,
        deployments: [deployment("m", { engines: [engine({ members: [standalone(2)] })] })],
        replicas: [r],
      }).m!.replicas.length;
    };
    expect([run(6, 1), run(7, 1), run(3, 2), run(4, 2)]).toEqual([1, 0, 1, 0]);
  });

  it("pods a pool's report already counts are not charged twice", () => {
    const reported = [
      cluster("a", {
        pools: [
          pool("default", {
            nodes: 1,
            observedNodes: 1,
            nodesByFreeDevices: [{ freeDevices: { [GPU_DRIVER]: 1 }, nodes: 1 }],
          }),
        ],
      }),
    ];
    const scheduled = replica("other", "a", 0, { podsScheduled: true });
    expect(
      place({ clusters: reported, deployments: [deployment("m")], replicas: [scheduled] }).m!.replicas,
    ).toEqual(["a/0@default"]);
    const pending = replica("other", "a", 0, { podsScheduled: false });
    expect(
      place({ clusters: reported, deployments: [deployment("m")], replicas: [pending] }).m!.replicas,
    ).toEqual([]);
    // without a report the pool is counted in whole nodes: every replica is charged
    expect(
      place({ clusters: one, deployments: [deployment("m")], replicas: [scheduled] }).m!.replicas,
    ).toEqual([]);
  });
});

describe("counting free devices (rule 5)", () => {
  const withReport = (free: Record<string, number>[], nodes = free.length, observedNodes = free.length) =>
    cluster("a", {
      pools: [
        pool("default", {
          nodes,
          observedNodes,
          nodesByFreeDevices: free.map((f) => ({ freeDevices: f, nodes: 1 })),
          devices: [gpu({ count: 4 })],
        }),
      ],
    });

  it.each<[string, InferenceCluster, ModelDeployment, number]>([
    [
      "four one-GPU replicas on one four-GPU node",
      withReport([{ [GPU_DRIVER]: 4 }]),
      deployment("m", { replicas: 5 }),
      4,
    ],
    [
      "a pod needing 2 GPUs skips nodes with 1 free",
      withReport([{ [GPU_DRIVER]: 1 }, { [GPU_DRIVER]: 1 }, { [GPU_DRIVER]: 2 }]),
      deployment("m", { replicas: 3, engines: [engine({ members: [standalone(2)] })] }),
      1,
    ],
    [
      "nodes the pool may grow by start empty",
      withReport([{ [GPU_DRIVER]: 1 }], 3, 1),
      deployment("m", { replicas: 3, engines: [engine({ members: [standalone(4)] })] }),
      2,
    ],
    [
      "copies multiply the pods",
      withReport([{ [GPU_DRIVER]: 4 }]),
      deployment("m", { replicas: 3, engines: [engine({ copies: 2 })] }),
      2,
    ],
    [
      "worker nodes multiply the pods",
      withReport([{ [GPU_DRIVER]: 4 }, { [GPU_DRIVER]: 4 }]),
      deployment("m", {
        replicas: 3,
        engines: [
          engine({
            members: [
              { role: "Leader", devices: [{ name: "g", count: 2, selectors: [] }] },
              { role: "Worker", workerNodes: 2, devices: [{ name: "g", count: 2, selectors: [] }] },
            ],
          }),
        ],
      }),
      1,
    ],
    [
      "no report: a pod takes a whole node",
      cluster("a", { pools: [pool("default", { nodes: 2, devices: [gpu({ count: 4 })] })] }),
      deployment("m", { replicas: 5 }),
      2,
    ],
  ])("%s", (_, c, d, placed) => {
    expect(
      placeFleet({ deployments: [d], clusters: [c], replicas: [] }).deployments[0]!.replicas.length,
    ).toBe(placed);
  });
});
