import { describe, expect, it } from "vitest";
import { cluster, deployment, engine, gpu, pool } from "../../test/fleet/fixtures.js";
import { replicaObject, toDryRun } from "./dry-run.js";
import { placeFleet } from "./place.js";

const gang = engine({
  members: [
    { role: "Leader", devices: [{ name: "gpu", count: 8, selectors: ["true"] }] },
    { role: "Worker", workerNodes: 2, devices: [{ name: "gpu", count: 8, selectors: ["true"] }] },
  ],
});
const result = placeFleet({
  deployments: [deployment("m", { engines: [gang] })],
  clusters: [
    cluster("east", {
      pools: [pool("h100", { nodes: 3, devices: [gpu({ deviceClassName: "h100.nvidia.com" })] })],
    }),
  ],
  replicas: [],
});

describe("toDryRun", () => {
  it("prints deployments keyed ns/name, replicas with members' pools and requests, conditions", () => {
    expect(toDryRun(result)).toEqual({
      deployments: {
        "ns/m": {
          replicas: [
            {
              cluster: "east",
              index: 0,
              gateway: "gw.east",
              engines: [
                {
                  name: "main",
                  members: [
                    {
                      role: "Leader",
                      pool: "h100",
                      deviceRequests: [
                        { name: "gpu", deviceClassName: "h100.nvidia.com", count: 8, selectors: ["true"] },
                      ],
                    },
                    {
                      role: "Worker",
                      pool: "h100",
                      deviceRequests: [
                        { name: "gpu", deviceClassName: "h100.nvidia.com", count: 8, selectors: ["true"] },
                      ],
                    },
                  ],
                },
              ],
            },
          ],
          conditions: [
            {
              type: "ReplicasScheduled",
              status: "True",
              reason: "ReplicasScheduled",
              message: "1 of 1 replicas scheduled",
            },
          ],
        },
      },
    });
  });
});

describe("replicaObject", () => {
  it("labels the replica and pins every member to its pool", () => {
    expect(replicaObject(result.deployments[0]!.replicas[0]!)).toEqual({
      apiVersion: "kubemoot.ai/v1alpha1",
      kind: "ModelReplica",
      metadata: {
        namespace: "ns",
        name: "m-east-0",
        labels: {
          "kubemoot.ai/deployment": "m",
          "kubemoot.ai/cluster": "east",
          "kubemoot.ai/replica-index": "0",
        },
      },
      spec: {
        clusterName: "east",
        engines: [
          {
            name: "main",
            copies: 1,
            members: [
              {
                role: "Leader",
                nodePoolName: "h100",
                nodeSelector: { "kubemoot.ai/pool": "h100" },
                deviceRequests: [
                  { name: "gpu", deviceClassName: "h100.nvidia.com", count: 8, selectors: [{ cel: "true" }] },
                ],
              },
              {
                role: "Worker",
                worker: { nodes: 2 },
                nodePoolName: "h100",
                nodeSelector: { "kubemoot.ai/pool": "h100" },
                deviceRequests: [
                  { name: "gpu", deviceClassName: "h100.nvidia.com", count: 8, selectors: [{ cel: "true" }] },
                ],
              },
            ],
          },
        ],
      },
    });
  });
});
