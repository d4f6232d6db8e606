// placeFleet over the fleet rules (docs/rules/fleet.md), one small fleet per case: what a pool
// has free (the ledger of what other replicas charge it, counting free devices) and which pool
// takes a replica (device matching, gangs in one pool or one fabric, topology.requiredLevel).
// Each case states what it expects as "cluster/index@pool" strings (test/fleet/place-helpers.ts),
// worked out from the rules.
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
import { gang, place } from "../../test/fleet/place-helpers.js";
import { placeFleet } from "./place.js";
import type { InferenceCluster, Member, ModelDeployment, ModelReplica } from "./types.js";

/** Cluster "a": one node, observed, whose pool reports `free` GPUs free on it. */
const reportedCluster = (free: number) => [
  cluster("a", {
    pools: [
      pool("default", {
        nodes: 1,
        observedNodes: 1,
        nodesByFreeDevices: [{ freeDevices: { [GPU_DRIVER]: free }, nodes: 1 }],
      }),
    ],
  }),
];

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
    const reported = reportedCluster(8);
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
    const reported = reportedCluster(1);
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

describe("device matching decides the pool", () => {
  it.each<[string, InferenceCluster, Member[], string[]]>([
    [
      "a published count of 0 matches nothing",
      cluster("a", { pools: [pool("default", { devices: [gpu({ count: 0 })] })] }),
      [standalone(1)],
      [],
    ],
    [
      "too few devices on a node",
      cluster("a", { pools: [pool("default", { devices: [gpu({ count: 2 })] })] }),
      [standalone(4)],
      [],
    ],
    [
      "a count that exactly fits",
      cluster("a", { pools: [pool("default", { devices: [gpu({ count: 4 })] })] }),
      [standalone(4)],
      ["a/0@default"],
    ],
    [
      "two requests against one device",
      cluster("a", { pools: [pool("default", { devices: [gpu({ count: 1 })] })] }),
      [
        {
          role: "Standalone",
          devices: [
            { name: "x", count: 1, selectors: [] },
            { name: "y", count: 1, selectors: [] },
          ],
        },
      ],
      [],
    ],
    [
      "a member that claims elsewhere is not left with only Synthetic matches",
      cluster("a", { pools: [pool("synthetic", { devices: [gpu({ claim: "Synthetic" })] }), pool("real")] }),
      [standalone(1)],
      ["a/0@real"],
    ],
    [
      "a cluster where nothing claims is not eligible",
      cluster("a", { pools: [pool("synthetic", { devices: [gpu({ claim: "Synthetic" })] })] }),
      [standalone(1)],
      [],
    ],
    [
      "a member without nodeSelector fits any pool and claims nothing",
      cluster("a", { pools: [pool("default", { nodes: 1 })] }),
      [
        { role: "Leader" },
        { role: "Worker", workerNodes: 1, devices: [{ name: "g", count: 1, selectors: [] }] },
      ],
      ["a/0@default+default"],
    ],
    [
      "Synthetic-only members ride along without cost",
      cluster("a", {
        pools: [
          pool("default", {
            nodes: 1,
            devices: [gpu({ name: "cpu", claim: "Synthetic", driver: "cpu", attributes: {} }), gpu()],
          }),
        ],
      }),
      [
        { role: "Leader", devices: [{ name: "cpu", count: 1, selectors: ['device.driver == "cpu"'] }] },
        {
          role: "Worker",
          workerNodes: 1,
          devices: [{ name: "g", count: 1, selectors: [`device.driver == "${GPU_DRIVER}"`] }],
        },
      ],
      ["a/0@default+default"],
    ],
  ])("%s", (_, c, members, want) => {
    const r = place({ clusters: [c], deployments: [deployment("m", { engines: [engine({ members })] })] });
    expect(r.m!.replicas).toEqual(want);
  });
});

describe("gangs: one pool, or one fabric (beyond upstream), or nowhere", () => {
  const twoPools = (fabricLevel: string | undefined, blocks: [string, string]) =>
    cluster("a", {
      ...(fabricLevel ? { fabricLevel } : {}),
      pools: [
        pool("p1", { nodes: 1, topology: { "topology.kubemoot.ai/block": blocks[0] } }),
        pool("p2", { nodes: 1, topology: { "topology.kubemoot.ai/block": blocks[1] } }),
      ],
    });
  const d = deployment("m", { engines: [engine({ members: gang })] });

  it.each<[string, InferenceCluster, string[]]>([
    [
      "one pool that holds the gang",
      cluster("a", { pools: [pool("p1", { nodes: 1 }), pool("p2", { nodes: 2 })] }),
      ["a/0@p2+p2"],
    ],
    ["never split without a fabric declaration", twoPools(undefined, ["nvl-1", "nvl-1"]), []],
    [
      "split across two pools of one fabric",
      twoPools("topology.kubemoot.ai/block", ["nvl-1", "nvl-1"]),
      ["a/0@p1+p2"],
    ],
    ["refused across two fabrics", twoPools("topology.kubemoot.ai/block", ["nvl-1", "nvl-2"]), []],
  ])("%s", (_, c, want) => {
    expect(place({ clusters: [c], deployments: [d] }).m!.replicas).toEqual(want);
  });

  it("spans only when no single pool can hold the gang", () => {
    const c = cluster("a", {
      fabricLevel: "block",
      pools: [
        pool("p1", { nodes: 1, topology: { block: "x" } }),
        pool("p2", { nodes: 2, topology: { block: "x" } }),
      ],
    });
    expect(place({ clusters: [c], deployments: [d] }).m!.replicas).toEqual(["a/0@p2+p2"]);
  });

  it("a retained spanning replica stays only while its pools share the fabric", () => {
    const spanning: ModelReplica = {
      ...replica("m", "a", 0),
      engines: [
        {
          name: "main",
          copies: 1,
          members: [
            {
              role: "Leader",
              nodePoolName: "p1",
              deviceRequests: [{ name: "gpu", deviceClassName: GPU_DRIVER, count: 8, selectors: [] }],
            },
            {
              role: "Worker",
              workerNodes: 1,
              nodePoolName: "p2",
              deviceRequests: [{ name: "gpu", deviceClassName: GPU_DRIVER, count: 8, selectors: [] }],
            },
          ],
        },
      ],
    };
    const same = placeFleet(
      {
        deployments: [d],
        clusters: [twoPools("topology.kubemoot.ai/block", ["f", "f"])],
        replicas: [spanning],
      },
      { fill: false },
    );
    const split = placeFleet(
      {
        deployments: [d],
        clusters: [twoPools("topology.kubemoot.ai/block", ["f", "g"])],
        replicas: [spanning],
      },
      { fill: false },
    );
    expect([same.deployments[0]!.replicas.length, split.deployments[0]!.replicas.length]).toEqual([1, 0]);
  });
});

describe("topology.requiredLevel: pools that publish the level, one domain (docs/rules/topology.md)", () => {
  const RACK = "topology.kubemoot.ai/rack";
  const BLOCK = "topology.kubemoot.ai/block";
  const racked = engine({ members: gang, requiredLevel: RACK });

  it("skips a pool that does not say which rack it is in, even when it has room", () => {
    const c = cluster("a", {
      pools: [pool("unlabelled", { nodes: 4 }), pool("r1", { nodes: 2, topology: { [RACK]: "r1" } })],
    });
    const r = place({ clusters: [c], deployments: [deployment("m", { engines: [racked] })] });
    expect(r.m!.replicas).toEqual(["a/0@r1+r1"]);
  });

  it("does not fit a cluster whose pools publish no such level", () => {
    const c = cluster("a", { pools: [pool("p", { nodes: 4, topology: { [BLOCK]: "b1" } })] });
    const r = place({ clusters: [c], deployments: [deployment("m", { engines: [racked] })] });
    expect(r.m!.replicas).toEqual([]);
    // The same engine without the requirement fits.
    const free = place({
      clusters: [c],
      deployments: [deployment("m", { engines: [engine({ members: gang })] })],
    });
    expect(free.m!.replicas).toEqual(["a/0@p+p"]);
  });

  it("spans pools of one fabric only when they also share the required domain", () => {
    const twoRacks = (r2: string) =>
      cluster("a", {
        fabricLevel: BLOCK,
        pools: [
          pool("p1", { nodes: 1, topology: { [BLOCK]: "nvl-1", [RACK]: "r1" } }),
          pool("p2", { nodes: 1, topology: { [BLOCK]: "nvl-1", [RACK]: r2 } }),
        ],
      });
    const d = deployment("m", { engines: [racked] });
    expect(place({ clusters: [twoRacks("r1")], deployments: [d] }).m!.replicas).toEqual(["a/0@p1+p2"]);
    expect(place({ clusters: [twoRacks("r2")], deployments: [d] }).m!.replicas).toEqual([]);
  });
});
