// Fleet placement in the operator: against the in-process FAKE API server (no kube-apiserver is
// available to the tests) through @kubernetes/client-node, and in manifests mode on real files.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { replicaName } from "../../src/fleet/index.js";
import {
  DEPLOYMENTS_FILE,
  FileFleet,
  FLEET_DIR,
  KubernetesFleet,
  MANAGED_BY_FLEET,
  MANAGED_BY_LABEL,
  REPLICAS_FILE,
} from "../../src/operator/fleet/index.js";
import { kubeConfigForServer } from "../../src/operator/kube/index.js";
import { FakeApiServer, type Obj } from "./fake-apiserver/index.js";
import { recordingLogger, sleep, waitFor } from "./helpers.js";

const V = "kubemoot.ai/v1alpha1";
const NS = "models";

function cluster(name: string, address: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: V,
    kind: "InferenceCluster",
    metadata: { name, labels: { tier: "prod" } },
    spec: extra,
    status: {
      conditions: [{ type: "Ready", status: "True" }],
      gateway: { address },
      gpuPools: [
        {
          name: "l4",
          nodes: 2,
          devices: [{ name: "gpu", driver: "gpu.nvidia.com", deviceClassName: "gpu.nvidia.com", count: 4 }],
        },
      ],
    },
  };
}

function deployment(replicas: number) {
  return {
    apiVersion: V,
    kind: "ModelDeployment",
    metadata: { name: "llama", namespace: NS },
    spec: {
      replicas,
      template: {
        spec: {
          clusterSelector: { matchLabels: { tier: "prod" } },
          engines: [
            {
              name: "main",
              members: [
                {
                  role: "Standalone",
                  nodeSelector: {
                    devices: [
                      { name: "gpu", count: 1, selectors: [{ cel: 'device.driver == "gpu.nvidia.com"' }] },
                    ],
                  },
                },
              ],
            },
          ],
        },
      },
    },
  };
}

async function list(fake: FakeApiServer, plural: string): Promise<Obj[]> {
  const res = await fetch(`${fake.url}/apis/kubemoot.ai/v1alpha1/${plural}`);
  return ((await res.json()) as { items: Obj[] }).items;
}

const labels = (o: Obj) => (o.metadata.labels ?? {}) as Record<string, string>;
const spec = (o: Obj) =>
  o.spec as unknown as {
    clusterName: string;
    engines: { members: { nodeSelector: Record<string, string> }[] }[];
  };

describe("fleet placement on Kubernetes (against the FAKE API server)", () => {
  let fake: FakeApiServer;
  let fleet: KubernetesFleet | undefined;

  beforeEach(async () => {
    fake = await FakeApiServer.start();
  });
  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
    await fake.close();
  });

  it("writes pool-pinned replicas, the deployment's condition, providers for serving replicas, and scales down", async () => {
    fake.apply(cluster("east", "10.0.0.1"));
    fake.apply(cluster("west", "10.0.1.1"));
    // A replica of another deployment: charged, never touched.
    fake.apply({
      apiVersion: V,
      kind: "ModelReplica",
      metadata: { name: "other-east-0", namespace: NS, labels: { "kubemoot.ai/deployment": "other" } },
      spec: { clusterName: "east", engines: [] },
    });
    const dep = fake.apply(deployment(2));
    fleet = new KubernetesFleet({
      kubeConfig: kubeConfigForServer(fake.url),
      logger: recordingLogger(),
      debounceMs: 20,
      resyncMs: 0,
      now: () => Date.parse("2026-11-30T12:00:00Z"),
    });
    await fleet.start();

    // Spread before pack: one replica on each cluster, pinned to the pool, owned by the deployment.
    const ours = await waitFor(async () => {
      const r = (await list(fake, "modelreplicas")).filter(
        (o) => labels(o)["kubemoot.ai/deployment"] === "llama",
      );
      return r.length === 2 ? r : undefined;
    }, "two replicas");
    expect(ours.map((o) => spec(o).clusterName).sort()).toEqual(["east", "west"]);
    for (const o of ours) {
      expect(spec(o).engines[0]!.members[0]!.nodeSelector).toEqual({ "kubemoot.ai/pool": "l4" });
      expect(o.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: "ModelDeployment", uid: dep.metadata.uid }),
      ]);
    }
    const status = await waitFor(
      () => fake.get(V, "ModelDeployment", NS, "llama")?.status as { conditions?: unknown[] } | undefined,
      "deployment status",
    );
    expect(status).toMatchObject({
      replicas: 2,
      conditions: [
        { type: "ReplicasScheduled", status: "True", lastTransitionTime: "2026-11-30T12:00:00.000Z" },
      ],
    });
    expect(fake.get(V, "ModelReplica", NS, "other-east-0")).toBeDefined();

    // The east replica reports Ready with an address: it becomes a ModelProvider.
    const eastName = replicaName("llama", "east", 0);
    const east = fake.get(V, "ModelReplica", NS, eastName)!;
    fake.apply({
      ...east,
      status: { conditions: [{ type: "Ready", status: "True" }], address: "http://10.0.0.1:11434" },
    });
    const provider = await waitFor(
      () => fake.get(V, "ModelProvider", NS, eastName),
      "a provider for the serving replica",
    );
    expect(labels(provider)[MANAGED_BY_LABEL]).toBe(MANAGED_BY_FLEET);
    expect(provider.spec).toEqual({ type: "ollama", endpoint: "http://10.0.0.1:11434" });

    // Scale down to 1: the highest (load, cluster name, index) goes — west.
    fake.apply(deployment(1));
    await waitFor(async () => {
      const r = (await list(fake, "modelreplicas")).filter(
        (o) => labels(o)["kubemoot.ai/deployment"] === "llama",
      );
      return r.length === 1 && spec(r[0]!).clusterName === "east";
    }, "scale down to the east replica");
    expect(fake.get(V, "ModelProvider", NS, eastName)).toBeDefined();

    // The replica stops serving: its provider goes; nothing else is deleted.
    const again = fake.get(V, "ModelReplica", NS, eastName)!;
    fake.apply({ ...again, status: { conditions: [{ type: "Ready", status: "False" }] } });
    await waitFor(() => fake.get(V, "ModelProvider", NS, eastName) === undefined, "the provider removed");
    expect(fake.get(V, "ModelReplica", NS, "other-east-0")).toBeDefined();
    expect(fake.get(V, "ModelReplica", NS, eastName)).toBeDefined();
  });

  it("a failed write is retried at the next resync, and nothing is written twice", async () => {
    fake.apply(cluster("east", "10.0.0.1"));
    fake.apply(deployment(1));
    fake.fail({ method: "POST", path: "/modelreplicas", status: 500, times: 2 });
    fleet = new KubernetesFleet({ kubeConfig: kubeConfigForServer(fake.url), debounceMs: 20, resyncMs: 100 });
    await fleet.start();
    expect(fleet.last?.failures.length).toBe(1);
    await waitFor(async () => (await list(fake, "modelreplicas")).length === 1, "the replica after retries");
    const posts = fake.requestsTo("POST", "/modelreplicas");
    expect(posts.filter((r) => r.status === 201)).toHaveLength(1);
    // Steady state: resyncs write nothing more.
    const writes = () => fake.requests.filter((r) => r.method !== "GET").length;
    const before = writes();
    await sleep(350);
    expect(writes()).toBe(before);
  });

  it("says InsufficientCapacity when no cluster matches, and places once one does", async () => {
    fake.apply({
      ...cluster("staging", "10.0.2.1"),
      metadata: { name: "staging", labels: { tier: "staging" } },
    });
    fake.apply(deployment(1));
    fleet = new KubernetesFleet({ kubeConfig: kubeConfigForServer(fake.url), debounceMs: 20, resyncMs: 0 });
    await fleet.start();
    const cond = await waitFor(
      () =>
        (
          fake.get(V, "ModelDeployment", NS, "llama")?.status as
            | { conditions?: { status: string; reason: string }[] }
            | undefined
        )?.conditions?.[0],
      "a condition",
    );
    expect(cond.status).toBe("False");
    expect((await list(fake, "modelreplicas")).length).toBe(0);
    fake.apply(cluster("east", "10.0.0.1"));
    await waitFor(
      async () => (await list(fake, "modelreplicas")).length === 1,
      "a replica once a cluster matches",
    );
    await waitFor(
      () =>
        (
          fake.get(V, "ModelDeployment", NS, "llama")?.status as
            | { conditions?: { status: string }[] }
            | undefined
        )?.conditions?.[0]?.status === "True",
      "ReplicasScheduled True",
    );
  });
});

describe("fleet placement in manifests mode", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "kubemoot-fleet-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes replicas and deployment status, and turns a serving replica into a provider", async () => {
    const { stringify } = await import("yaml");
    const manifests = join(dir, "m");
    const out = join(dir, "out");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(manifests);
    await writeFile(
      join(manifests, "fleet.yaml"),
      [cluster("east", "10.0.0.1"), cluster("west", "10.0.1.1"), deployment(2)]
        .map((o) => stringify(o))
        .join("---\n"),
    );
    const seen: unknown[][] = [];
    const fleet = new FileFleet({
      manifests: [manifests],
      outDir: out,
      rescanMs: 0,
      onProviders: (p) => seen.push(p),
    });
    await fleet.start();
    const replicas = parseAllDocuments(await readFile(join(out, FLEET_DIR, REPLICAS_FILE), "utf8")).map(
      (d) => d.toJS() as Obj,
    );
    expect(replicas.map((r) => spec(r).clusterName).sort()).toEqual(["east", "west"]);
    const status = JSON.parse(await readFile(join(out, FLEET_DIR, DEPLOYMENTS_FILE), "utf8"));
    expect(status[`${NS}/llama`]).toMatchObject({
      replicas: 2,
      conditions: [{ type: "ReplicasScheduled", status: "True" }],
    });
    expect(fleet.providers()).toEqual([]);

    // The observed east replica, Ready with an address, is in the manifests now.
    const east = replicas.find((r) => spec(r).clusterName === "east")!;
    await writeFile(
      join(manifests, "observed.yaml"),
      stringify({
        ...east,
        status: { conditions: [{ type: "Ready", status: "True" }], address: "http://10.0.0.1:11434" },
      }),
    );
    await fleet.refresh();
    expect(
      fleet.providers().map((p) => [p.metadata?.name, (p.spec as { endpoint: string }).endpoint]),
    ).toEqual([[east.metadata.name, "http://10.0.0.1:11434"]]);
    expect(seen.length).toBe(1);
    await fleet.stop();
  });
});

describe("the operator with --fleet in manifests mode", () => {
  it("hands a serving replica to the binder and the publisher as a ModelProvider", async () => {
    const { mkdir } = await import("node:fs/promises");
    const { stringify } = await import("yaml");
    const { pino } = await import("pino");
    const { startOperator } = await import("../../src/operator/index.js");
    const { openStateStore } = await import("../../src/state/index.js");
    const dir = await mkdtemp(join(tmpdir(), "kubemoot-fleet-op-"));
    const manifests = join(dir, "m");
    await mkdir(manifests);
    const name = replicaName("llama", "east", 0);
    await writeFile(
      join(manifests, "fleet.yaml"),
      [
        cluster("east", "10.0.0.1"),
        deployment(1),
        {
          apiVersion: V,
          kind: "ModelReplica",
          metadata: {
            name,
            namespace: NS,
            labels: {
              "kubemoot.ai/deployment": "llama",
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
                    role: "Standalone",
                    nodePoolName: "l4",
                    deviceRequests: [
                      {
                        name: "gpu",
                        deviceClassName: "gpu.nvidia.com",
                        count: 1,
                        selectors: [{ cel: 'device.driver == "gpu.nvidia.com"' }],
                      },
                    ],
                  },
                ],
              },
            ],
          },
          // 127.0.0.1:9 answers nothing: the publisher marks it not ready, which is fine here.
          status: { conditions: [{ type: "Ready", status: "True" }], address: "http://127.0.0.1:9" },
        },
      ]
        .map((o) => stringify(o))
        .join("---\n"),
    );
    const state = await openStateStore("memory");
    const op = await startOperator({
      manifests: [manifests],
      bindingsDir: join(dir, "out"),
      state,
      logger: pino({ level: "silent" }),
      probeIntervalMs: 60_000,
      fleet: true,
    });
    try {
      await waitFor(
        () => op.reconciler.providers().some((p) => p.name === name),
        "the fleet provider in the binder",
      );
      const p = op.reconciler.providers().find((x) => x.name === name)!;
      expect(p).toMatchObject({ namespace: NS, type: "ollama", endpoint: "http://127.0.0.1:9" });
      // The retained replica is emitted again (same cluster and index), not moved.
      const replicas = await readFile(join(dir, "out", FLEET_DIR, REPLICAS_FILE), "utf8");
      expect(replicas).toContain(`name: ${name}`);
    } finally {
      await op.stop();
      await state.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the operator with --fleet in manifests mode follows changes", () => {
  it("re-places when the binder's source sees the manifests change (no scan of its own)", async () => {
    const { mkdir } = await import("node:fs/promises");
    const { stringify } = await import("yaml");
    const { pino } = await import("pino");
    const { startOperator } = await import("../../src/operator/index.js");
    const { openStateStore } = await import("../../src/state/index.js");
    const dir = await mkdtemp(join(tmpdir(), "kubemoot-fleet-watch-"));
    const manifests = join(dir, "m");
    await mkdir(manifests);
    await writeFile(
      join(manifests, "fleet.yaml"),
      [cluster("east", "10.0.0.1"), deployment(1)].map((o) => stringify(o)).join("---\n"),
    );
    const state = await openStateStore("memory");
    const op = await startOperator({
      manifests: [manifests],
      bindingsDir: join(dir, "out"),
      state,
      logger: pino({ level: "silent" }),
      probeIntervalMs: 60_000,
      fleet: true,
    });
    const replicas = async () =>
      parseAllDocuments(await readFile(join(dir, "out", FLEET_DIR, REPLICAS_FILE), "utf8")).map(
        (d) => d.toJS() as Obj,
      );
    try {
      expect((await replicas()).map((r) => spec(r).clusterName)).toEqual(["east"]);
      await writeFile(
        join(manifests, "fleet.yaml"),
        [cluster("east", "10.0.0.1"), cluster("west", "10.0.1.1"), deployment(2)]
          .map((o) => stringify(o))
          .join("---\n"),
      );
      await waitFor(async () => (await replicas()).length === 2, "a second replica after the change", 15_000);
      expect((await replicas()).map((r) => spec(r).clusterName).sort()).toEqual(["east", "west"]);
    } finally {
      await op.stop();
      await state.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("what fleet placement writes and reads is declared by the CRDs (nothing a real API server would prune)", () => {
  it("replica status (Ready, address, providerType), deployment status, the ModelProviders", async () => {
    const { loadCrds, unknownFields } = await import("../chart/validate.js");
    const { desiredFleet } = await import("../../src/operator/fleet/index.js");
    const crds = loadCrds();
    const schema = (kind: string) => crds.get(`kubemoot.ai/${kind}`)!.versions.get("v1alpha1")!;
    const dep = { ...deployment(1), metadata: { name: "llama", namespace: NS, uid: "u-1", generation: 3 } };
    const first = desiredFleet(
      { deployments: [dep], clusters: [cluster("east", "10.0.0.1")], classes: [], replicas: [] },
      { now: "2026-11-30T12:00:00Z" },
    );
    const emitted = [...first.replicas.values()][0]!;
    const observed = {
      ...emitted,
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        address: "http://10.0.0.1:11434",
        providerType: "ollama",
      },
    };
    expect(unknownFields(schema("ModelReplica"), observed)).toEqual([]);
    const second = desiredFleet(
      { deployments: [dep], clusters: [cluster("east", "10.0.0.1")], classes: [], replicas: [observed] },
      { now: "2026-11-30T12:00:00Z" },
    );
    const provider = [...second.providers.values()][0]!;
    expect(provider).toBeDefined();
    expect(unknownFields(schema("ModelProvider"), provider)).toEqual([]);
    const status = second.statuses[0]!.status;
    expect(status.conditions[0]).toMatchObject({ observedGeneration: 3 });
    expect(unknownFields(schema("ModelDeployment"), { ...dep, status })).toEqual([]);
  });
});
