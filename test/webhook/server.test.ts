// The injection webhook over real HTTPS: a self-signed certificate made with openssl, a real
// AdmissionReview v1 POSTed with undici, and the returned patch applied to the pod.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import jsonpatch from "fast-json-patch";
import { Pod } from "kubernetes-models/v1/Pod";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentInjectionBinding,
  DEFAULT_INJECTION_OPTIONS,
  type InjectionWebhook,
  MUTATE_PATH,
  SIDECAR_CONTAINER_NAME,
  STATUS_ANNOTATION,
  startInjectionWebhook,
} from "../../src/operator/webhook/index.js";

const BINDINGS = new Map<string, AgentInjectionBinding>([
  [
    "crew-a/analyst",
    {
      namespace: "crew-a",
      name: "analyst",
      env: {
        KUBEMOOT_MODEL_MODEL: "qwen3:8b",
        KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:8b","score":30}]',
      },
    },
  ],
]);

let dir: string;
let webhook: InjectionWebhook;
let dispatcher: Agent;

function pod(agent: string, namespace = "crew-a") {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      generateName: `${agent}-`,
      namespace,
      labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": agent },
    },
    spec: { containers: [{ name: "agent", image: "agent:1" }] },
  };
}

function review(object: unknown, namespace = "crew-a", uid = "705ab4f5-6393-11e8-b7cc-42010a800002") {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      namespace,
      operation: "CREATE",
      object,
    },
  };
}

async function post(body: unknown, route = MUTATE_PATH) {
  const res = await request(`https://127.0.0.1:${webhook.port}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    dispatcher,
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "kubemoot-webhook-"));
  writeFileSync(
    path.join(dir, "san.cnf"),
    "[req]\ndistinguished_name=dn\n[dn]\n[ext]\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  execFileSync(
    "/usr/bin/openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=kubemoot-webhook",
      "-keyout",
      path.join(dir, "tls.key"),
      "-out",
      path.join(dir, "tls.crt"),
      "-config",
      path.join(dir, "san.cnf"),
      "-extensions",
      "ext",
    ],
    { stdio: "ignore" },
  );
  webhook = await startInjectionWebhook({
    port: 0,
    host: "127.0.0.1",
    certDir: dir,
    lookup: (ns, name) => BINDINGS.get(`${ns}/${name}`),
    injection: { ...DEFAULT_INJECTION_OPTIONS, natsUrl: "nats://nats:4222" },
  });
  // Trust exactly this certificate: the test fails if the server is not the one we started.
  dispatcher = new Agent({ connect: { ca: readFileSync(path.join(dir, "tls.crt")) } });
});

afterAll(async () => {
  await webhook?.close();
  await dispatcher?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("injection webhook over HTTPS", () => {
  it("answers a labelled, bound pod with a JSONPatch that injects the sidecar", async () => {
    const object = pod("analyst");
    const res = await post(review(object));
    expect(res.status).toBe(200);
    const response = res.body.response as Record<string, unknown>;
    expect(response.uid).toBe("705ab4f5-6393-11e8-b7cc-42010a800002");
    expect(response.allowed).toBe(true);
    expect(response.patchType).toBe("JSONPatch");
    const ops = JSON.parse(Buffer.from(String(response.patch), "base64").toString("utf8"));
    const patched = jsonpatch.applyPatch(structuredClone(object), ops, true, false).newDocument as {
      spec: { initContainers?: unknown[] };
    };
    expect(patched.spec.initContainers?.[0]).toMatchObject({
      name: SIDECAR_CONTAINER_NAME,
      restartPolicy: "Always",
    });
    new Pod(patched as never).validate();
  });

  it("admits an unbound pod unchanged in spec, with a warning and the annotation saying why", async () => {
    const res = await post(review(pod("stranger")));
    const response = res.body.response as { allowed: boolean; patch: string; warnings: string[] };
    expect(response.allowed).toBe(true);
    expect(response.warnings.join()).toContain("crew-a/stranger");
    const ops = JSON.parse(Buffer.from(response.patch, "base64").toString("utf8")) as { path: string }[];
    expect(ops.every((o) => o.path.startsWith("/metadata"))).toBe(true);
    const object = pod("stranger");
    const patched = jsonpatch.applyPatch(structuredClone(object), ops as jsonpatch.Operation[], true, false)
      .newDocument as { metadata: { annotations?: Record<string, string> } };
    expect(patched.metadata.annotations?.[STATUS_ANNOTATION]).toMatch(/^skipped: .*no binding/);
  });

  it("never patches kube-system", async () => {
    const res = await post(review(pod("analyst", "kube-system"), "kube-system"));
    const response = res.body.response as Record<string, unknown>;
    expect(response.allowed).toBe(true);
    expect(response.patch).toBeUndefined();
  });

  it("rejects what is not an AdmissionReview with HTTP 400 and a JSON error", async () => {
    const notJson = await post("{nope");
    expect(notJson.status).toBe(400);
    const noUid = await post({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: {} });
    expect(noUid.status).toBe(400);
    expect(String(noUid.body.error)).toContain("request.uid");
    expect(webhook.stats.errors).toBeGreaterThanOrEqual(2);
  });

  it("serves /healthz and 404s elsewhere", async () => {
    const health = await request(`https://127.0.0.1:${webhook.port}/healthz`, { dispatcher });
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    const other = await post(review(pod("analyst")), "/validate");
    expect(other.status).toBe(404);
  });
});
