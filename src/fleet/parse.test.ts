import { describe, expect, it } from "vitest";
import { parseFleetDocuments } from "./parse.js";

const deploymentDoc = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
  apiVersion: "kubemoot.ai/v1alpha1",
  kind: "ModelDeployment",
  metadata: { name: "llama", namespace: "models", ...metadata },
  spec,
});
const standalone = {
  role: "Standalone",
  nodeSelector: { devices: [{ name: "gpu", selectors: [{ cel: "true" }] }] },
};
const validSpec = (
  engines: unknown[] = [{ name: "main", members: [standalone] }],
  extra: Record<string, unknown> = {},
) => ({
  replicas: 2,
  template: { spec: { clusterSelector: { matchLabels: { tier: "prod" } }, engines, ...extra } },
});

const clusterDoc = (status: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  apiVersion: "kubemoot.ai/v1alpha1",
  kind: "InferenceCluster",
  metadata: { name: "east", labels: { tier: "prod" } },
  spec,
  status,
});
const device = { name: "gpu", driver: "gpu.nvidia.com", deviceClassName: "gpu.nvidia.com", count: 8 };

function parse(...values: unknown[]) {
  return parseFleetDocuments(values.map((value, i) => ({ file: "f.yaml", document: i + 1, value })));
}

describe("parseFleetDocuments", () => {
  it("reads a deployment with its defaults", () => {
    const { input, issues } = parse(deploymentDoc(validSpec()));
    expect(issues).toEqual([]);
    expect(input.deployments).toEqual([
      {
        namespace: "models",
        name: "llama",
        replicas: 2,
        clusterSelector: { tier: "prod" },
        tolerations: [],
        engines: [
          {
            name: "main",
            copies: 1,
            members: [{ role: "Standalone", devices: [{ name: "gpu", count: 1, selectors: ["true"] }] }],
          },
        ],
      },
    ]);
  });

  it("reads a cluster: Ready, gateway, pools, report, attributes and capacity", () => {
    const { input, issues } = parse(
      clusterDoc(
        {
          conditions: [{ type: "Ready", status: "True" }],
          gateway: { address: "10.0.0.1" },
          gpuPools: [
            {
              name: "h100",
              nodes: 3,
              observedNodes: 1,
              nodesByFreeDevices: [{ freeDevices: { "gpu.nvidia.com": 2 }, nodes: 1 }],
              topology: { block: "b1" },
              devices: [
                {
                  ...device,
                  count: -1,
                  attributes: {
                    productName: { string: "H100" },
                    v: { version: "1.2.3" },
                    mig: { bool: true },
                    cc: { int: 9 },
                  },
                  capacity: { memory: { value: "80Gi" } },
                },
              ],
            },
          ],
        },
        { taints: [{ key: "k", effect: "NoSchedule" }], fabricLevel: "block" },
      ),
    );
    expect(issues).toEqual([]);
    expect(input.clusters[0]).toMatchObject({
      name: "east",
      labels: { tier: "prod" },
      ready: true,
      gatewayAddress: "10.0.0.1",
      fabricLevel: "block",
      taints: [{ key: "k", effect: "NoSchedule" }],
      pools: [
        {
          name: "h100",
          nodes: 3,
          observedNodes: 1,
          nodesByFreeDevices: [{ freeDevices: { "gpu.nvidia.com": 2 }, nodes: 1 }],
          topology: { block: "b1" },
          devices: [{ claim: "DRA", count: 0, capacity: { memory: "80Gi" } }],
        },
      ],
    });
  });

  it("skips other kinds and groups", () => {
    const { input, issues } = parse(
      { apiVersion: "kubemoot.ai/v1alpha1", kind: "Model", metadata: { name: "m" } },
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } },
      null,
    );
    expect(issues).toEqual([]);
    expect(input.deployments).toEqual([]);
  });

  it.each<[string, unknown, string, RegExp]>([
    ["replicas above 10", deploymentDoc({ ...validSpec(), replicas: 11 }), "spec.replicas", /1\.\.10/],
    ["replicas 0", deploymentDoc({ ...validSpec(), replicas: 0 }), "spec.replicas", /≥ 1/],
    [
      "the hostname level required",
      deploymentDoc(
        validSpec([
          { name: "main", topology: { requiredLevel: "kubernetes.io/hostname" }, members: [standalone] },
        ]),
      ),
      "spec.template.spec.engines[0].topology.requiredLevel",
      /implicit/,
    ],
    ["no engines", deploymentDoc(validSpec([])), "spec.template.spec.engines", /at least 1/],
    [
      "nine engines",
      deploymentDoc(
        validSpec(Array.from({ length: 9 }, (_, i) => ({ name: `e${i}`, members: [standalone] }))),
      ),
      "spec.template.spec.engines",
      /at most 8/,
    ],
    [
      "duplicate engine names",
      deploymentDoc(
        validSpec([
          { name: "a", members: [standalone] },
          { name: "a", members: [standalone] },
        ]),
      ),
      "spec.template.spec.engines[1].name",
      /duplicate/,
    ],
    [
      "copies 65",
      deploymentDoc(validSpec([{ name: "a", copies: 65, members: [standalone] }])),
      "spec.template.spec.engines[0].copies",
      /1\.\.64/,
    ],
    [
      "two Standalones",
      deploymentDoc(validSpec([{ name: "a", members: [standalone, standalone] }])),
      "spec.template.spec.engines[0].members",
      /exactly one Standalone/,
    ],
    [
      "a Leader without Workers",
      deploymentDoc(validSpec([{ name: "a", members: [{ ...standalone, role: "Leader" }] }])),
      "spec.template.spec.engines[0].members",
      /Leader plus Workers/,
    ],
    [
      "worker nodes 64",
      deploymentDoc(
        validSpec([
          {
            name: "a",
            members: [
              { ...standalone, role: "Leader" },
              { role: "Worker", worker: { nodes: 64 } },
            ],
          },
        ]),
      ),
      "spec.template.spec.engines[0].members[1].worker.nodes",
      /1\.\.63/,
    ],
    [
      "no member with a nodeSelector",
      deploymentDoc(validSpec([{ name: "a", members: [{ role: "Standalone" }] }])),
      "spec.template.spec.engines[0].members",
      /nodeSelector/,
    ],
    [
      "an unknown role",
      deploymentDoc(validSpec([{ name: "a", members: [{ ...standalone, role: "Boss" }] }])),
      "spec.template.spec.engines[0].members[0].role",
      /Standalone, Leader, Worker/,
    ],
    [
      "device count 65",
      deploymentDoc(
        validSpec([
          {
            name: "a",
            members: [{ role: "Standalone", nodeSelector: { devices: [{ name: "g", count: 65 }] } }],
          },
        ]),
      ),
      "spec.template.spec.engines[0].members[0].nodeSelector.devices[0].count",
      /1\.\.64/,
    ],
    [
      "17 device requests",
      deploymentDoc(
        validSpec([
          {
            name: "a",
            members: [
              {
                role: "Standalone",
                nodeSelector: { devices: Array.from({ length: 17 }, (_, i) => ({ name: `g${i}` })) },
              },
            ],
          },
        ]),
      ),
      "spec.template.spec.engines[0].members[0].nodeSelector.devices",
      /at most 16/,
    ],
    [
      "a selector without cel",
      deploymentDoc(
        validSpec([
          {
            name: "a",
            members: [{ role: "Standalone", nodeSelector: { devices: [{ name: "g", selectors: [{}] }] } }],
          },
        ]),
      ),
      "spec.template.spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cel",
      /required/,
    ],
    [
      "a keyless Equal toleration",
      deploymentDoc(validSpec(undefined, { tolerations: [{ operator: "Equal", value: "x" }] })),
      "spec.template.spec.tolerations[0].operator",
      /Exists when key is empty/,
    ],
    [
      "a toleration effect",
      deploymentDoc(
        validSpec(undefined, { tolerations: [{ key: "k", operator: "Exists", effect: "Sometimes" }] }),
      ),
      "spec.template.spec.tolerations[0].effect",
      /NoSchedule, NoExecute/,
    ],
    [
      "a numeric label",
      deploymentDoc(validSpec(undefined, { clusterSelector: { matchLabels: { tier: 1 } } })),
      'spec.template.spec.clusterSelector.matchLabels["tier"]',
      /quote it/,
    ],
    [
      "nine pools",
      clusterDoc({ gpuPools: Array.from({ length: 9 }, (_, i) => ({ name: `p${i}`, nodes: 1 })) }),
      "status.gpuPools",
      /at most 8/,
    ],
    [
      "a pool without nodes",
      clusterDoc({ gpuPools: [{ name: "p" }] }),
      "status.gpuPools[0].nodes",
      /required/,
    ],
    [
      "an attribute with two types",
      clusterDoc({
        gpuPools: [
          { name: "p", nodes: 1, devices: [{ ...device, attributes: { a: { string: "x", int: 1 } } }] },
        ],
      }),
      'status.gpuPools[0].devices[0].attributes["a"]',
      /exactly one/,
    ],
    [
      "a capacity that is no quantity",
      clusterDoc({
        gpuPools: [
          { name: "p", nodes: 1, devices: [{ ...device, capacity: { memory: { value: "lots" } } }] },
        ],
      }),
      'status.gpuPools[0].devices[0].capacity["memory"].value',
      /quantity/,
    ],
    [
      "a device claim",
      clusterDoc({ gpuPools: [{ name: "p", nodes: 1, devices: [{ ...device, claim: "Maybe" }] }] }),
      "status.gpuPools[0].devices[0].claim",
      /DRA, Synthetic/,
    ],
    [
      "a taint effect",
      clusterDoc({}, { taints: [{ key: "k", effect: "Never" }] }),
      "spec.taints[0].effect",
      /NoSchedule/,
    ],
    [
      "a replica without index label",
      {
        apiVersion: "kubemoot.ai/v1alpha1",
        kind: "ModelReplica",
        metadata: { name: "r", labels: {} },
        spec: { clusterName: "a", engines: [] },
      },
      'metadata.labels["kubemoot.ai/replica-index"]',
      /required/,
    ],
    [
      "a replica member without pool",
      {
        apiVersion: "kubemoot.ai/v1alpha1",
        kind: "ModelReplica",
        metadata: { name: "r", labels: { "kubemoot.ai/replica-index": "0" } },
        spec: { clusterName: "a", engines: [{ name: "main", members: [{ role: "Standalone" }] }] },
      },
      "spec.engines[0].members[0].nodePoolName",
      /required/,
    ],
  ])("%s: an issue naming the field", (_, doc, field, message) => {
    const { issues } = parse(doc);
    const issue = issues.find((i) => i.field === field);
    expect(issue, JSON.stringify(issues)).toBeDefined();
    expect(issue!.message).toMatch(message);
    expect(issue!.file).toBe("f.yaml");
    expect(issue!.object).toBeDefined();
  });

  it("an invalid object is left out, valid ones stay", () => {
    const { input, issues } = parse(
      deploymentDoc({ ...validSpec(), replicas: 99 }),
      deploymentDoc(validSpec(), { name: "ok" }),
    );
    expect(issues).toHaveLength(1);
    expect(input.deployments.map((d) => d.name)).toEqual(["ok"]);
  });

  it("reads a replica's labels, pins and ModelPodsScheduled", () => {
    const { input, issues } = parse({
      apiVersion: "kubemoot.ai/v1alpha1",
      kind: "ModelReplica",
      metadata: {
        name: "llama-east-3",
        namespace: "models",
        labels: {
          "kubemoot.ai/deployment": "llama",
          "kubemoot.ai/cluster": "east",
          "kubemoot.ai/replica-index": "3",
        },
      },
      spec: {
        clusterName: "east",
        engines: [
          {
            name: "main",
            copies: 2,
            members: [
              {
                role: "Leader",
                nodePoolName: "h100",
                deviceRequests: [{ name: "gpu", deviceClassName: "gpu.nvidia.com", count: 8 }],
              },
              { role: "Worker", worker: { nodes: 3 }, nodePoolName: "h100" },
            ],
          },
        ],
      },
      status: { conditions: [{ type: "ModelPodsScheduled", status: "True" }] },
    });
    expect(issues).toEqual([]);
    expect(input.replicas[0]).toEqual({
      namespace: "models",
      name: "llama-east-3",
      deployment: "llama",
      clusterName: "east",
      index: 3,
      podsScheduled: true,
      engines: [
        {
          name: "main",
          copies: 2,
          members: [
            {
              role: "Leader",
              nodePoolName: "h100",
              deviceRequests: [{ name: "gpu", deviceClassName: "gpu.nvidia.com", count: 8, selectors: [] }],
            },
            { role: "Worker", workerNodes: 3, nodePoolName: "h100", deviceRequests: [] },
          ],
        },
      ],
    });
  });
});
