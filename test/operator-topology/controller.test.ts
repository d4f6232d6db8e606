// The TopologySource controller end to end through @kubernetes/client-node against the
// in-process FAKE API server (test/operator/fake-apiserver: no kube-apiserver can run here):
// Nodes and ConfigMaps from informers, validation by the pure topology model, status written
// back only when it changes.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { kubeConfigForServer } from "../../src/operator/kube/index.js";
import { TopologySourceController } from "../../src/operator/topology/index.js";
import { FakeApiServer } from "../operator/fake-apiserver/index.js";
import { waitFor } from "../operator/helpers.js";

const V = "kubemoot.ai/v1alpha1";
const BLOCK = "topology.kubemoot.ai/block";
const RACK = "topology.kubemoot.ai/rack";

function node(name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: { "kubernetes.io/hostname": name, "kubemoot.ai/gpu-node": "true", ...labels } },
    status: { conditions: [{ type: "Ready", status: "True" }] },
  };
}

function snapshot(revision: string, nodes: Record<string, Record<string, string>>): string {
  return JSON.stringify({ apiVersion: "topology.kubemoot.ai/v1alpha1", revision, nodes });
}

const configMapSource = {
  apiVersion: V,
  kind: "TopologySource",
  metadata: { name: "fabric" },
  spec: {
    nodeSelector: { matchLabels: { "kubemoot.ai/gpu-node": "true" } },
    levels: [BLOCK, RACK],
    configMap: {
      configMapRef: { namespace: "kubemoot", name: "fabric-topology" },
      key: "snapshot.json",
      maxStaleness: "1h",
    },
  },
};

function configMap(text: string) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { namespace: "kubemoot", name: "fabric-topology" },
    data: { "snapshot.json": text },
  };
}

type Status = {
  ready: boolean;
  valid: boolean;
  reason: string;
  message: string;
  lastSuccessfulRevision?: string;
  selectedNodes: number;
};

describe("TopologySource controller (against the FAKE API server)", () => {
  let fake: FakeApiServer;
  let ctl: TopologySourceController | undefined;
  const status = () => fake.get(V, "TopologySource", undefined, "fabric")?.status as Status | undefined;

  beforeEach(async () => {
    fake = await FakeApiServer.start();
    fake.apply(node("gpu-1"));
    fake.apply(node("gpu-2"));
    fake.apply(node("cpu-1", { "kubemoot.ai/gpu-node": "false" }));
  });
  afterEach(async () => {
    await ctl?.stop();
    ctl = undefined;
    await fake.close();
  });

  it("accepts a ConfigMap snapshot, keeps it through an invalid one, and re-reads on change", async () => {
    fake.apply(
      configMap(
        snapshot("r1", { "gpu-1": { [BLOCK]: "a", [RACK]: "a1" }, "gpu-2": { [BLOCK]: "a", [RACK]: "a2" } }),
      ),
    );
    fake.apply(configMapSource);
    ctl = new TopologySourceController({ kubeConfig: kubeConfigForServer(fake.url), debounceMs: 20 });
    await ctl.start();
    const accepted = await waitFor(
      () => (status()?.reason === "Accepted" ? status() : undefined),
      "Accepted",
    );
    expect(accepted).toMatchObject({
      ready: true,
      valid: true,
      lastSuccessfulRevision: "r1",
      selectedNodes: 2,
    });
    expect(ctl.snapshots().get("fabric")?.get("gpu-2")).toEqual({ [BLOCK]: "a", [RACK]: "a2" });

    // A node the selector does not pick: the whole snapshot is refused, r1 stays in force.
    fake.apply(configMap(snapshot("r2", { "cpu-1": { [BLOCK]: "a", [RACK]: "a1" } })));
    const refused = await waitFor(
      () => (status()?.reason === "InvalidSnapshot" ? status() : undefined),
      "InvalidSnapshot",
    );
    expect(refused).toMatchObject({ ready: true, valid: false, lastSuccessfulRevision: "r1" });
    expect(refused.message).toContain("cpu-1");
    expect(ctl.snapshots().get("fabric")?.get("gpu-1")).toEqual({ [BLOCK]: "a", [RACK]: "a1" });

    // A valid r3 replaces it.
    fake.apply(configMap(snapshot("r3", { "gpu-1": { [BLOCK]: "b", [RACK]: "b1" } })));
    await waitFor(() => status()?.lastSuccessfulRevision === "r3" && status()?.valid === true, "r3 accepted");
    expect(ctl.snapshots().get("fabric")?.get("gpu-1")).toEqual({ [BLOCK]: "b", [RACK]: "b1" });
  });

  it("reports a missing ConfigMap as ReadFailed, not Ready", async () => {
    fake.apply(configMapSource);
    ctl = new TopologySourceController({ kubeConfig: kubeConfigForServer(fake.url), debounceMs: 20 });
    await ctl.start();
    const s = await waitFor(() => (status()?.reason === "ReadFailed" ? status() : undefined), "ReadFailed");
    expect(s.ready).toBe(false);
    expect(s.message).toContain("fabric-topology");
  });

  it("checks a nodeLabels source's tree on Node changes", async () => {
    fake.apply(node("gpu-1", { [BLOCK]: "a", [RACK]: "a1" }));
    fake.apply(node("gpu-2", { [BLOCK]: "a", [RACK]: "a2" }));
    fake.apply({
      ...configMapSource,
      spec: { ...configMapSource.spec, configMap: undefined, nodeLabels: {} },
    });
    ctl = new TopologySourceController({ kubeConfig: kubeConfigForServer(fake.url), debounceMs: 20 });
    await ctl.start();
    await waitFor(() => status()?.ready === true, "Ready");
    // Rack a1 under a second block: one value under two parents breaks the tree.
    fake.apply(node("gpu-2", { [BLOCK]: "b", [RACK]: "a1" }));
    const broken = await waitFor(() => (status()?.ready === false ? status() : undefined), "not Ready");
    expect(broken.reason).toBe("InvalidHierarchy");
  });

  it("refuses a webhook over plain http as an invalid spec, naming the field", async () => {
    fake.apply({
      ...configMapSource,
      spec: {
        ...configMapSource.spec,
        configMap: undefined,
        webhook: {
          url: "http://inventory.example/topology",
          pollInterval: "1m",
          timeout: "10s",
          maxStaleness: "1h",
        },
      },
    });
    ctl = new TopologySourceController({ kubeConfig: kubeConfigForServer(fake.url), debounceMs: 20 });
    await ctl.start();
    const s = await waitFor(() => (status()?.reason === "InvalidSpec" ? status() : undefined), "InvalidSpec");
    expect(s.ready).toBe(false);
    expect(s.message).toMatch(/webhook\.url/);
  });

  describe("webhook credentials are read only from the operator's namespace", () => {
    const webhookSource = (secretNamespace: string) => ({
      ...configMapSource,
      spec: {
        ...configMapSource.spec,
        configMap: undefined,
        webhook: {
          // Nothing listens on port 1: a source that gets past the check fails its fetch.
          url: "https://127.0.0.1:1/topology",
          pollInterval: "1m",
          timeout: "2s",
          maxStaleness: "1h",
          credential: {
            bearerTokenSecretRef: { namespace: secretNamespace, name: "inv-token", key: "token" },
          },
        },
      },
    });
    const secret = (namespace: string) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { namespace, name: "inv-token" },
      data: { token: Buffer.from("t0ken").toString("base64") },
    });

    it("refuses a Secret in another namespace in the status, and never reads it", async () => {
      fake.apply(secret("payments"));
      fake.apply(webhookSource("payments"));
      ctl = new TopologySourceController({
        kubeConfig: kubeConfigForServer(fake.url),
        debounceMs: 20,
        secretNamespace: "kubemoot",
      });
      await ctl.start();
      const s = await waitFor(
        () => (status()?.reason === "SecretNamespaceNotAllowed" ? status() : undefined),
        "SecretNamespaceNotAllowed",
      );
      expect(s.ready).toBe(false);
      expect(s.valid).toBe(false);
      expect(s.message).toContain("spec.webhook.credential.bearerTokenSecretRef.namespace");
      expect(s.message).toContain(`Secret payments/inv-token is outside the operator's namespace "kubemoot"`);
      expect(s.message).not.toContain("t0ken");
      expect(fake.requestsTo("GET", "/secrets")).toEqual([]);
    });

    it("refuses a host outside the allowed hosts before reading the credential", async () => {
      fake.apply(secret("kubemoot"));
      fake.apply(webhookSource("kubemoot"));
      ctl = new TopologySourceController({
        kubeConfig: kubeConfigForServer(fake.url),
        debounceMs: 20,
        secretNamespace: "kubemoot",
        allowedHosts: ["inventory.example.com", "*.corp.example"],
      });
      await ctl.start();
      const s = await waitFor(
        () => (status()?.reason === "HostNotAllowed" ? status() : undefined),
        "HostNotAllowed",
      );
      expect(s.ready).toBe(false);
      expect(s.message).toContain(
        `spec.webhook.url: host "127.0.0.1:1" is not in the operator's allowed hosts`,
      );
      expect(fake.requestsTo("GET", "/secrets")).toEqual([]);
    });

    it("reads a Secret in its own namespace (then fails only at the unreachable host)", async () => {
      fake.apply(secret("kubemoot"));
      fake.apply(webhookSource("kubemoot"));
      ctl = new TopologySourceController({
        kubeConfig: kubeConfigForServer(fake.url),
        debounceMs: 20,
        secretNamespace: "kubemoot",
        allowedHosts: ["127.0.0.1"],
      });
      await ctl.start();
      await waitFor(() => fake.requestsTo("GET", "/namespaces/kubemoot/secrets/inv-token")[0], "Secret read");
      const s = await waitFor(() => (status()?.reason ? status() : undefined), "a status");
      expect(s.reason).not.toBe("SecretNamespaceNotAllowed");
      expect(s.reason).not.toBe("InvalidSpec");
    });
  });
});
