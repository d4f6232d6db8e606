// placeFleet over spec/fleet.md's rules, one small fleet per case. Each case states what it
// expects as "cluster/index@pool" strings (members joined by "+"), worked out from the rules.
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
import { placeFleet } from "./place.js";
import type {
  FleetInput,
  FleetOptions,
  InferenceCluster,
  Member,
  ModelDeployment,
  ModelReplica,
} from "./types.js";

function place(
  input: Partial<FleetInput>,
  options: FleetOptions = {},
): Record<string, { replicas: string[]; reason: string; message: string; retained: number }> {
  const result = placeFleet({ deployments: [], clusters: [], replicas: [], ...input }, options);
  const out: Record<string, { replicas: string[]; reason: string; message: string; retained: number }> = {};
  for (const d of result.deployments) {
    out[d.name] = {
      replicas: d.replicas.map(
        (r) =>
          `${r.clusterName}/${r.index}@${r.engines.map((e) => e.members.map((m) => m.nodePoolName).join("+")).join(",")}`,
      ),
      reason: d.conditions[0]!.reason,
      message: d.conditions[0]!.message,
      retained: d.replicas.filter((r) => r.retained).length,
    };
  }
  return out;
}

const abc = ["a", "b", "c"].map((n) => cluster(n));
const gang: Member[] = [
  { role: "Leader", devices: [{ name: "gpu", count: 8, selectors: [] }] },
  { role: "Worker", workerNodes: 1, devices: [{ name: "gpu", count: 8, selectors: [] }] },
];
const H200 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"';

describe("fill: spread before pack, lowest free index", () => {
  it("spreads over the clusters hosting the fewest, then by name", () => {
    const r = place({ clusters: abc, deployments: [deployment("m", { replicas: 4 })] });
    expect(r.m!.replicas).toEqual(["a/0@default", "a/3@default", "b/1@default", "c/2@default"]);
    expect(r.m!.reason).toBe("ReplicasScheduled");
    expect(r.m!.message).toBe("4 of 4 replicas scheduled");
  });

  it("counts only this deployment's replicas when spreading", () => {
    const roomy = ["a", "b"].map((n) => cluster(n, { pools: [pool("default", { nodes: 4 })] }));
    const r = place({
      clusters: roomy,
      deployments: [deployment("m", { replicas: 1 })],
      replicas: [replica("other", "a", 0), replica("other", "a", 1)],
    });
    expect(r.m!.replicas).toEqual(["a/0@default"]);
  });

  it("reuses the lowest free index", () => {
    const r = place({
      clusters: abc,
      deployments: [deployment("m", { replicas: 3 })],
      replicas: [replica("m", "a", 0), replica("m", "b", 2)],
    });
    expect(r.m!.replicas).toEqual(["a/0@default", "b/2@default", "c/1@default"]);
    expect(r.m!.retained).toBe(2);
  });

  it("packs once every cluster hosts one, and stops at capacity", () => {
    const small = ["a", "b"].map((n) => cluster(n, { pools: [pool("default", { nodes: 1 })] }));
    const r = place({ clusters: small, deployments: [deployment("m", { replicas: 3 })] });
    expect(r.m!.replicas).toEqual(["a/0@default", "b/1@default"]);
    expect(r.m!.reason).toBe("InsufficientCapacity");
    expect(r.m!.message).toBe("2 of 3 replicas scheduled (checked 2 clusters)");
  });

  it("engines of one replica may use different pools of one cluster", () => {
    const c = cluster("a", {
      pools: [
        pool("h100"),
        pool("h200", { devices: [gpu({ attributes: { productName: { string: "NVIDIA H200" } } })] }),
      ],
    });
    const d = deployment("m", {
      engines: [engine({ name: "decode" }), engine({ name: "prefill", members: [standalone(1, [H200])] })],
    });
    expect(place({ clusters: [c], deployments: [d] }).m!.replicas).toEqual(["a/0@h100,h200"]);
  });
});

describe("retain and scale down", () => {
  it("scales down by highest (cluster load, cluster name, index)", () => {
    const existing = [
      replica("m", "a", 0),
      replica("m", "a", 4),
      replica("m", "b", 1),
      replica("m", "c", 2),
      replica("m", "c", 3),
    ];
    const cases: [number, string[]][] = [
      // loads a 2, b 1, c 2: the highest (load, name, index) is (2, c, 3); then a has load 2 alone
      [4, ["a/0@default", "a/4@default", "b/1@default", "c/2@default"]],
      [3, ["a/0@default", "b/1@default", "c/2@default"]],
      [2, ["a/0@default", "b/1@default"]],
      [1, ["a/0@default"]],
    ];
    for (const [replicas, want] of cases) {
      const r = place({ clusters: abc, deployments: [deployment("m", { replicas })], replicas: existing });
      expect([replicas, r.m!.replicas]).toEqual([replicas, want]);
    }
  });

  it("the first name wins an identity collision", () => {
    const first = { ...replica("m", "a", 0), name: "m-0-first" };
    const second = { ...replica("m", "a", 0, { pool: "other" }), name: "m-0-second" };
    const r = placeFleet({
      deployments: [deployment("m", { replicas: 2 })],
      clusters: [cluster("a", { pools: [pool("default"), pool("other")] })],
      replicas: [second, first],
    });
    expect(
      r.deployments[0]!.replicas.map((x) => `${x.name}@${x.engines[0]!.members[0]!.nodePoolName}`),
    ).toEqual(["m-0-first@default", "m-a-1@default"]);
  });

  it("two objects of one name: content decides, never input order", () => {
    const a = replica("m", "a", 0, { pool: "p1" });
    const b = replica("m", "a", 0, { pool: "p2" });
    const c = cluster("a", { pools: [pool("p1"), pool("p2")] });
    const run = (replicas: ModelReplica[]) =>
      place({ clusters: [c], deployments: [deployment("m")], replicas }).m!.replicas;
    expect(run([a, b])).toEqual(run([b, a]));
  });

  it.each<[string, Partial<InferenceCluster> | "deleted", Partial<ModelDeployment>, boolean]>([
    ["a not-Ready cluster keeps its replica", { ready: false }, {}, true],
    ["a cluster without gateway keeps its replica", { gatewayAddress: undefined }, {}, true],
    [
      "an untolerated NoSchedule taint keeps the replica",
      { taints: [{ key: "k", effect: "NoSchedule" }] },
      {},
      true,
    ],
    ["an untolerated NoExecute taint drains it", { taints: [{ key: "k", effect: "NoExecute" }] }, {}, false],
    [
      "a tolerated NoExecute taint keeps it",
      { taints: [{ key: "k", value: "v", effect: "NoExecute" }] },
      { tolerations: [{ key: "k", operator: "Equal", value: "v", effect: "NoExecute" }] },
      true,
    ],
    ["a deleted cluster drops it", "deleted", {}, false],
    [
      "a cluster that stops matching drops it",
      { labels: { tier: "dev" } },
      { clusterSelector: { tier: "prod" } },
      false,
    ],
    ["a changed copies count is a new shape", {}, { engines: [engine({ copies: 2 })] }, false],
    ["a changed role is a new shape", {}, { engines: [engine({ members: gang })] }, false],
    ["a renamed engine is a new shape", {}, { engines: [engine({ name: "other" })] }, false],
    ["a changed device count is a new claim", {}, { engines: [engine({ members: [standalone(2)] })] }, false],
    [
      "selector drift off the pinned pool re-places",
      {},
      { engines: [engine({ members: [standalone(1, [H200])] })] },
      false,
    ],
  ])("%s", (_, clusterOver, deploymentOver, kept) => {
    const clusters =
      clusterOver === "deleted" ? [] : [cluster("a", { labels: { tier: "prod" }, ...clusterOver })];
    const d = deployment("m", deploymentOver);
    const result = placeFleet(
      { deployments: [d], clusters, replicas: [replica("m", "a", 0)] },
      { fill: false },
    );
    expect(result.deployments[0]!.replicas.length).toBe(kept ? 1 : 0);
  });

  it("selector drift re-places onto the pool that now matches (the old index is free again)", () => {
    const c = cluster("a", {
      pools: [
        pool("h100"),
        pool("h200", { devices: [gpu({ attributes: { productName: { string: "NVIDIA H200" } } })] }),
      ],
    });
    const d = deployment("m", { engines: [engine({ members: [standalone(1, [H200])] })] });
    const r = place({ clusters: [c], deployments: [d], replicas: [replica("m", "a", 0, { pool: "h100" })] });
    expect(r.m).toMatchObject({ replicas: ["a/0@h200"], retained: 0 });
  });

  it("attribute drift keeps the pin while the pinned pool still matches", () => {
    // A fresh placement would take the first pool; the existing replica stays on the second.
    const c = cluster("a", { pools: [pool("first"), pool("second")] });
    const r = place({
      clusters: [c],
      deployments: [deployment("m")],
      replicas: [replica("m", "a", 0, { pool: "second" })],
    });
    expect(r.m).toMatchObject({ replicas: ["a/0@second"], retained: 1 });
    // and selectors that change but still match the pinned pool keep it too
    const d = deployment("m", {
      engines: [engine({ members: [standalone(1, ['device.driver == "gpu.nvidia.com"'])] })],
    });
    const r2 = place({
      clusters: [c],
      deployments: [d],
      replicas: [replica("m", "a", 0, { pool: "second" })],
    });
    expect(r2.m).toMatchObject({ replicas: ["a/0@second"], retained: 1 });
  });

  it.each<[string, string, boolean]>([
    ["a drifted product name that still matches keeps the pin", "NVIDIA H100 NVL", true],
    ["a drifted product name that no longer matches re-places", "NVIDIA A100", false],
  ])("%s", (_, product, pinned) => {
    const selector = 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H")';
    const c = cluster("a", {
      pools: [
        pool("first"),
        pool("second", { devices: [gpu({ attributes: { productName: { string: product } } })] }),
      ],
    });
    const d = deployment("m", { engines: [engine({ members: [standalone(1, [selector])] })] });
    const r = place({
      clusters: [c],
      deployments: [d],
      replicas: [replica("m", "a", 0, { pool: "second" })],
    });
    expect(r.m).toMatchObject(
      pinned ? { replicas: ["a/0@second"], retained: 1 } : { replicas: ["a/0@first"], retained: 0 },
    );
  });

  it("a pinned pool that disappeared drops the replica", () => {
    const r = place({
      clusters: [cluster("a")],
      deployments: [deployment("m")],
      replicas: [replica("m", "a", 0, { pool: "gone" })],
    });
    expect(r.m).toMatchObject({ replicas: ["a/0@default"], retained: 0 });
  });

  it("--no-fill retains without placing", () => {
    const r = place(
      { clusters: abc, deployments: [deployment("m", { replicas: 3 })], replicas: [replica("m", "b", 1)] },
      { fill: false },
    );
    expect(r.m).toMatchObject({
      replicas: ["b/1@default"],
      reason: "FillDisabled",
      message: "1 of 3 replicas scheduled (fill disabled)",
    });
  });
});

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

describe("cluster eligibility for fill", () => {
  const taint = { key: "dedicated", value: "gpu", effect: "NoSchedule" as const };
  it.each<[string, Partial<InferenceCluster>, Partial<ModelDeployment>, number]>([
    ["not Ready", { ready: false }, {}, 0],
    ["no gateway address", { gatewayAddress: undefined }, {}, 0],
    ["untolerated NoSchedule", { taints: [taint] }, {}, 0],
    ["untolerated NoExecute", { taints: [{ ...taint, effect: "NoExecute" }] }, {}, 0],
    [
      "tolerated by Equal",
      { taints: [taint] },
      { tolerations: [{ key: "dedicated", operator: "Equal", value: "gpu" }] },
      1,
    ],
    [
      "Equal with another value",
      { taints: [taint] },
      { tolerations: [{ key: "dedicated", operator: "Equal", value: "cpu" }] },
      0,
    ],
    ["keyless Exists", { taints: [taint] }, { tolerations: [{ operator: "Exists" }] }, 1],
    [
      "effect-scoped toleration of another effect",
      { taints: [taint] },
      { tolerations: [{ key: "dedicated", operator: "Exists", effect: "NoExecute" }] },
      0,
    ],
    ["PreferNoSchedule does not block", { taints: [{ ...taint, effect: "PreferNoSchedule" }] }, {}, 1],
    ["labels not matching", { labels: { tier: "dev" } }, { clusterSelector: { tier: "prod" } }, 0],
  ])("%s", (_, over, dOver, placed) => {
    const r = placeFleet({
      deployments: [deployment("m", dOver)],
      clusters: [cluster("a", over)],
      replicas: [],
    });
    expect(r.deployments[0]!.replicas.length).toBe(placed);
  });
});

describe("conditions", () => {
  it("NoClusters when no cluster matches the selector", () => {
    const r = place({ clusters: abc, deployments: [deployment("m", { clusterSelector: { tier: "gpu" } })] });
    expect(r.m).toMatchObject({ reason: "NoClusters", replicas: [] });
  });

  it("InvalidNodeSelector names the deployment, engine, member, request and selector, and keeps what runs", () => {
    const d = deployment("m", {
      replicas: 3,
      engines: [engine({ name: "prefill", members: [standalone(1, ["true", 'device.driver == "x" &&'])] })],
    });
    const result = placeFleet({ deployments: [d], clusters: abc, replicas: [replica("m", "b", 0)] });
    const out = result.deployments[0]!;
    expect(out.conditions[0]).toMatchObject({ status: "False", reason: "InvalidNodeSelector" });
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]).toContain("ModelDeployment ns/m");
    expect(out.errors[0]).toContain(
      "spec.template.spec.engines[0].members[0].nodeSelector.devices[0].selectors[1].cel",
    );
    expect(out.errors[0]).toContain('engine "prefill"');
    expect(out.errors[0]).toContain('request "gpu"');
    expect(out.replicas.map((r) => `${r.clusterName}/${r.index}`)).toEqual(["b/0"]);
  });
});

describe("emitted replicas", () => {
  it("carry the pool, the resolved device class, labels' values and the gateway", () => {
    const c = cluster("a", {
      pools: [pool("h100", { devices: [gpu({ deviceClassName: "h100.nvidia.com" })] })],
    });
    const r = placeFleet({ deployments: [deployment("m")], clusters: [c], replicas: [] }).deployments[0]!
      .replicas[0]!;
    expect(r).toMatchObject({
      namespace: "ns",
      name: "m-a-0",
      deployment: "m",
      clusterName: "a",
      index: 0,
      gateway: "gw.a",
      retained: false,
      engines: [
        {
          name: "main",
          copies: 1,
          members: [
            {
              role: "Standalone",
              nodePoolName: "h100",
              deviceRequests: [{ name: "gpu", deviceClassName: "h100.nvidia.com", count: 1, selectors: [] }],
            },
          ],
        },
      ],
    });
  });

  it("a pool listing no devices takes its InferenceClass's", () => {
    const c = cluster("a", { pools: [pool("p", { devices: [], inferenceClassName: "h200" })] });
    const d = deployment("m", { engines: [engine({ members: [standalone(1, [H200])] })] });
    const classes = [
      { name: "h200", devices: [gpu({ attributes: { productName: { string: "NVIDIA H200" } } })] },
    ];
    expect(
      placeFleet({ deployments: [d], clusters: [c], classes, replicas: [] }).deployments[0]!.replicas,
    ).toHaveLength(1);
    expect(
      placeFleet({ deployments: [d], clusters: [c], replicas: [] }).deployments[0]!.replicas,
    ).toHaveLength(0);
  });
});

describe("topology.requiredLevel: pools that publish the level, one domain (spec/topology.md)", () => {
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
