// Smaller pieces: quantities, manifest reading, the weights preference and the flavor limit.
import { describe, expect, it } from "vitest";
import { planFlavors } from "./flavors.js";
import { engineGangs, nodeFree, podGangs } from "./gangs.js";
import { HOSTNAME } from "./levels.js";
import { parseTopologyManifests } from "./manifests.js";
import { formatQuantity, parseQuantity } from "./quantity.js";
import { preferredHostnames, weightsAffinity } from "./weights.js";

describe("quantities", () => {
  it.each([
    ["500m", 500],
    ["2", 2000],
    ["0.1", 100],
    ["16Gi", 16 * 2 ** 30 * 1000],
    ["1k", 1_000_000],
    ["1e3", 1_000_000],
    [4, 4000],
  ])("%s is %d milli-units", (q, milli) => {
    expect(parseQuantity(q)).toBe(milli);
  });

  it("refuses what is not a quantity, and formats whole units plainly", () => {
    expect(parseQuantity("lots")).toBeUndefined();
    expect(parseQuantity("-1")).toBeUndefined();
    expect([formatQuantity(8000), formatQuantity(500)]).toEqual(["8", "500m"]);
  });
});

const doc = (value: unknown, document = 1) => ({ file: "m.yaml", document, value });

describe("parseTopologyManifests", () => {
  it("reads Nodes, Pods and gangs; bound pods use capacity", () => {
    const { manifests, issues } = parseTopologyManifests([
      doc({
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "n1", labels: { [HOSTNAME]: "n1" } },
        spec: { taints: [{ key: "k", effect: "NoSchedule" }] },
        status: {
          allocatable: { cpu: "8", "nvidia.com/gpu": "4", pods: "110" },
          conditions: [{ type: "Ready", status: "False" }],
        },
      }),
      doc({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { namespace: "ml", name: "bound" },
        spec: {
          nodeName: "n1",
          containers: [{ resources: { requests: { cpu: "2" }, limits: { "nvidia.com/gpu": "1" } } }],
        },
      }),
      ...["p0", "p1"].map((name, i) =>
        doc(
          {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
              namespace: "ml",
              name,
              labels: { "kueue.x-k8s.io/pod-group-name": "g" },
              annotations: {
                "kueue.x-k8s.io/pod-group-total-count": "3",
                "kueue.x-k8s.io/podset-required-topology": "topology.kubemoot.ai/rack",
              },
            },
            spec: { containers: [{ resources: { requests: { cpu: i === 0 ? "1" : "2" } } }] },
          },
          i + 3,
        ),
      ),
      doc({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "skipped" } }),
    ]);
    expect(issues).toEqual([]);
    expect(manifests.nodes[0]).toMatchObject({ ready: false, taints: [{ key: "k", effect: "NoSchedule" }] });
    expect(nodeFree(manifests.nodes, manifests.pods).get("n1")).toEqual({
      cpu: 6000,
      "nvidia.com/gpu": 3000,
      pods: 109_000,
    });
    expect(podGangs(manifests.pods)).toMatchObject([
      {
        key: "ml/g",
        size: 3,
        requests: { cpu: 2000, pods: 1000 },
        topology: { mode: "required", level: "topology.kubemoot.ai/rack" },
      },
    ]);
  });

  it("turns each replica's engines into gangs: members × copies pods, devices as GPUs", () => {
    const { manifests, issues } = parseTopologyManifests([
      doc({
        apiVersion: "kubemoot.ai/v1alpha1",
        kind: "ModelDeployment",
        metadata: { namespace: "ml", name: "llama" },
        spec: {
          replicas: 2,
          template: {
            spec: {
              engines: [
                {
                  name: "main",
                  copies: 2,
                  topology: { requiredLevel: "topology.kubemoot.ai/rack" },
                  members: [
                    { role: "Leader", nodeSelector: { devices: [{ name: "gpu", count: 8 }] } },
                    {
                      role: "Worker",
                      worker: { nodes: 3 },
                      nodeSelector: { devices: [{ name: "gpu", count: 4 }] },
                    },
                  ],
                },
                { name: "unplaced", members: [{ role: "Standalone" }] },
              ],
            },
          },
        },
      }),
    ]);
    expect(issues).toEqual([]);
    const d = manifests.deployments[0]!;
    expect(engineGangs(d, 1)).toEqual([
      {
        key: "ml/llama-1-main",
        size: 8,
        requests: { "nvidia.com/gpu": 8000, pods: 1000 },
        topology: { mode: "required", level: "topology.kubemoot.ai/rack" },
        tolerations: [],
      },
    ]);
  });

  it.each([
    [
      { apiVersion: "v1", kind: "Node", metadata: { name: "n" }, status: { allocatable: { cpu: "lots" } } },
      {
        kind: "Node",
        object: "n",
        field: 'status.allocatable["cpu"]',
        message: '"lots" is not a resource quantity',
      },
    ],
    [
      {
        apiVersion: "kubemoot.ai/v1alpha1",
        kind: "TopologySource",
        metadata: { name: "s" },
        spec: { nodeSelector: {}, levels: ["a/b"] },
      },
      { field: "spec", message: "exactly one of nodeLabels, configMap, webhook is required, got none" },
    ],
    [
      {
        apiVersion: "kubemoot.ai/v1alpha1",
        kind: "TopologySource",
        metadata: { name: "s" },
        spec: { nodeSelector: {}, levels: [HOSTNAME], nodeLabels: {} },
      },
      { field: "spec.levels[0]", message: `${HOSTNAME} is implicit and must not be listed` },
    ],
    [
      {
        apiVersion: "kubemoot.ai/v1alpha1",
        kind: "TopologySource",
        metadata: { name: "s" },
        spec: {
          nodeSelector: {},
          levels: ["a.io/x"],
          webhook: {
            url: "https://inv",
            pollInterval: "30s",
            timeout: "1m",
            credential: { bearerTokenSecretRef: { namespace: "kubemoot", name: "t", key: "token" } },
          },
        },
      },
      { field: "spec.webhook.timeout", message: "1m must not exceed pollInterval 30s" },
    ],
    [
      {
        apiVersion: "kubemoot.ai/v1alpha1",
        kind: "TopologySource",
        metadata: { name: "s" },
        spec: {
          nodeSelector: {},
          levels: ["a.io/x"],
          webhook: {
            url: "https://inv",
            pollInterval: "30s",
            timeout: "5s",
            credential: { bearerTokenSecretRef: { name: "t" }, basicAuthSecretRef: { name: "b" } },
          },
        },
      },
      {
        field: "spec.webhook.credential",
        message:
          "exactly one of bearerTokenSecretRef, basicAuthSecretRef, clientCertificateSecretRef is required",
      },
    ],
    [
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          namespace: "ml",
          name: "p",
          annotations: { "kueue.x-k8s.io/podset-required-topology": HOSTNAME },
        },
        spec: { containers: [] },
      },
      {
        object: "ml/p",
        field: 'metadata.annotations["kueue.x-k8s.io/podset-required-topology"]',
        message: `${HOSTNAME} is implicit and cannot be requested`,
      },
    ],
  ])("reports an invalid field naming the object (%#)", (value, issue) => {
    expect(parseTopologyManifests([doc(value)]).issues).toEqual([
      expect.objectContaining({ file: "m.yaml", ...issue }),
    ]);
  });
});

describe("weights locality", () => {
  const store = (
    node: string,
    digests: { digest: string; ready?: boolean; mounted?: boolean; lastUsed?: number }[],
    ok = true,
  ) => ({
    node,
    ready: ok,
    csiRegistered: true,
    digests: digests.map((d) => ({ ready: true, mounted: false, ...d })),
  });

  it("names holders mounting now, then most recently used, then by name, at most 16 per digest", () => {
    const stores = [
      store("z", [{ digest: "sha256:a", mounted: true }]),
      store("old", [{ digest: "sha256:a", lastUsed: 1 }]),
      store("new", [{ digest: "sha256:a", lastUsed: 9 }]),
      store("stale", [{ digest: "sha256:a", mounted: true }], false),
      store("dl", [{ digest: "sha256:a", ready: false }]),
      ...Array.from({ length: 20 }, (_, i) =>
        store(`m${String(i).padStart(2, "0")}`, [{ digest: "sha256:b" }]),
      ),
    ];
    const terms = weightsAffinity(["sha256:b", "sha256:a", "sha256:none"], stores);
    expect(terms.map((t) => t.preference.matchExpressions[0]!.values)).toEqual([
      ["z", "new", "old"],
      Array.from({ length: 16 }, (_, i) => `m${String(i).padStart(2, "0")}`),
    ]);
    expect(terms[0]!.preference.matchExpressions[0]!.key).toBe(HOSTNAME);
    expect(preferredHostnames(terms).slice(0, 3)).toEqual(["z", "new", "old"]);
  });
});

describe("flavor limit", () => {
  it("refuses a plan of more than 64 flavors whole, keeping the previous one", () => {
    const nodes = (n: number) =>
      new Map(
        Array.from({ length: n }, (_, i) => [
          `n${i}`,
          { profile: `fnv64-${i % 8}`, hardware: `gpu-${Math.floor(i / 8)}` },
        ]),
      );
    const ok = planFlavors(nodes(64));
    expect(ok.ok && ok.flavors.length).toBe(64);
    const refused = planFlavors(nodes(65), ok.ok ? ok.flavors : undefined);
    expect(refused).toMatchObject({ ok: false, reason: "TooManyFlavors" });
    expect(!refused.ok && refused.previous).toBe(ok.ok && ok.flavors);
  });

  it("pins each flavor to its profile and hardware", () => {
    const plan = planFlavors(new Map([["n1", { profile: "fnv64-1", hardware: "NVIDIA-H100-80GB-HBM3" }]]));
    expect(plan).toMatchObject({
      ok: true,
      flavors: [
        {
          name: "kubemoot-nvidia-h100-80gb-hbm3-fnv64-1",
          nodeLabels: {
            "topology.kubemoot.ai/profile": "fnv64-1",
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
          },
          nodes: ["n1"],
        },
      ],
    });
  });
});
