// placeFleet over the fleet rules (docs/rules/fleet.md), one small fleet per case: the conditions
// and the emitted replicas. Each case states what it expects as "cluster/index@pool" strings
// (test/fleet/place-helpers.ts), worked out from the rules.
import { describe, expect, it } from "vitest";
import { cluster, deployment, engine, gpu, pool, replica, standalone } from "../../test/fleet/fixtures.js";
import { abc, H200, place } from "../../test/fleet/place-helpers.js";
import { placeFleet } from "./place.js";

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
