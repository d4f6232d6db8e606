// The FAKE API server's own behaviour, so that the operator's tests rest on a fake that does
// what the real API server does on the paths they use.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeApiServer } from "./fake-apiserver/index.js";

const V = "kubemoot.ai/v1alpha1";

describe("FAKE API server", () => {
  let fake: FakeApiServer;
  beforeEach(async () => {
    fake = await FakeApiServer.start();
    fake.apply({
      apiVersion: V,
      kind: "Agent",
      metadata: { name: "a", namespace: "ns" },
      spec: { capabilities: [] },
    });
  });
  afterEach(async () => {
    await fake.close();
  });

  const call = async (method: string, path: string, body?: unknown, contentType = "application/json") => {
    const res = await fetch(`${fake.url}${path}`, {
      method,
      headers: { "content-type": contentType },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("lists namespaced and cluster-wide with a resourceVersion, 404s unknown paths", async () => {
    const ns = await call("GET", "/apis/kubemoot.ai/v1alpha1/namespaces/ns/agents");
    const all = await call("GET", "/apis/kubemoot.ai/v1alpha1/agents");
    const other = await call("GET", "/apis/kubemoot.ai/v1alpha1/namespaces/other/agents");
    expect(ns.body).toMatchObject({ kind: "AgentList", metadata: { resourceVersion: expect.any(String) } });
    expect((all.body.items as unknown[]).length).toBe(1);
    expect((other.body.items as unknown[]).length).toBe(0);
    expect((await call("GET", "/apis/kubemoot.ai/v1alpha1/widgets")).status).toBe(404);
  });

  it("accepts only merge patches on /status, and only the status part", async () => {
    const path = "/apis/kubemoot.ai/v1alpha1/namespaces/ns/agents/a/status";
    const patch = { status: { scheduling: { model: "m" } }, spec: { capabilities: ["x"] } };
    expect((await call("PATCH", path, patch, "application/json-patch+json")).status).toBe(415);
    expect((await call("PATCH", path, patch, "application/strategic-merge-patch+json")).status).toBe(415);
    const ok = await call("PATCH", path, patch, "application/merge-patch+json");
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: { scheduling: { model: "m" } }, spec: { capabilities: [] } });
    expect((ok.body.metadata as { generation: number }).generation).toBe(1);
  });

  it("applies JSON patches with test operations (422 when a test fails)", async () => {
    const d = fake.apply({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: "ns" },
      spec: { template: { spec: { containers: [{ name: "c" }] } } },
    });
    const path = "/apis/apps/v1/namespaces/ns/deployments/d";
    const bad = [{ op: "test", path: "/metadata/resourceVersion", value: "1" }];
    expect((await call("PATCH", path, bad, "application/json-patch+json")).status).toBe(422);
    const good = [
      { op: "test", path: "/metadata/resourceVersion", value: d.metadata.resourceVersion },
      { op: "add", path: "/spec/template/spec/containers/0/env", value: [{ name: "A", value: "1" }] },
    ];
    const res = await call("PATCH", path, good, "application/json-patch+json");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      metadata: { generation: 2 },
      spec: { template: { spec: { containers: [{ env: [{ name: "A" }] }] } } },
    });
  });

  it("creates events with generated names under both events APIs", async () => {
    const ev = {
      metadata: { generateName: "x." },
      reason: "FailedScheduling",
      involvedObject: { name: "a" },
    };
    expect((await call("POST", "/api/v1/namespaces/ns/events", ev)).status).toBe(201);
    expect((await call("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", ev)).status).toBe(201);
    expect(fake.events()).toHaveLength(2);
  });

  it("streams watch events after a resourceVersion, and 410 after compaction", async () => {
    const list = await call("GET", "/apis/kubemoot.ai/v1alpha1/agents");
    const rv = (list.body.metadata as { resourceVersion: string }).resourceVersion;
    const ctrl = new AbortController();
    const res = await fetch(`${fake.url}/apis/kubemoot.ai/v1alpha1/agents?watch=true&resourceVersion=${rv}`, {
      signal: ctrl.signal,
    });
    const reader = res.body!.getReader();
    fake.apply({
      apiVersion: V,
      kind: "Agent",
      metadata: { name: "b", namespace: "ns" },
      spec: { capabilities: [] },
    });
    const chunk = new TextDecoder().decode((await reader.read()).value);
    expect(JSON.parse(chunk.trim())).toMatchObject({ type: "ADDED", object: { metadata: { name: "b" } } });
    ctrl.abort();

    fake.compact();
    const gone = await fetch(`${fake.url}/apis/kubemoot.ai/v1alpha1/agents?watch=true&resourceVersion=${rv}`);
    expect(JSON.parse((await gone.text()).trim())).toMatchObject({ type: "ERROR", object: { code: 410 } });
  });
});
