// placeFleet over the fleet rules (docs/rules/fleet.md), one small fleet per case: fill (spread
// before pack, the lowest free index), retain and scale down, and which clusters fill may use.
// Each case states what it expects as "cluster/index@pool" strings (test/fleet/place-helpers.ts),
// worked out from the rules.
import { describe, expect, it } from "vitest";
import { cluster, deployment, engine, gpu, pool, replica, standalone } from "../../test/fleet/fixtures.js";
import { abc, gang, H200, place } from "../../test/fleet/place-helpers.js";
import { placeFleet } from "./place.js";
import type { InferenceCluster, ModelDeployment, ModelReplica } from "./types.js";

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
