// Issue 17, endpoint allowlist, the default install: the operator's injection webhook (a real
// AdmissionReview over TLS) gives each sidecar KUBEMOOT_PROVIDER_ENDPOINTS from the
// ModelProviders it manages, plus the extra entries it was started with; the sidecar's own
// configuration reads that value and allows exactly those endpoints.
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningOperator, startOperator } from "../../src/operator/index.js";
import { DEFAULT_INJECTION_OPTIONS, MUTATE_PATH } from "../../src/operator/webhook/index.js";
import { schedulerConfigFromEnv } from "../../src/scheduler/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { makeTestPki, type TestPki } from "../helpers/pki.js";
import { EXAMPLES, waitFor } from "../operator/helpers.js";

describe("the webhook fills KUBEMOOT_PROVIDER_ENDPOINTS from the managed ModelProviders", () => {
  let pki: TestPki;
  let dir: string;
  let state: StateStore;
  let op: RunningOperator;
  let dispatcher: Agent;

  beforeAll(async () => {
    pki = await makeTestPki();
    dir = await mkdtemp(path.join(tmpdir(), "kubemoot-allowlist-webhook-"));
    const certDir = path.join(dir, "tls");
    await mkdir(certDir);
    await copyFile(path.join(pki.dir, "server.crt"), path.join(certDir, "tls.crt"));
    await copyFile(path.join(pki.dir, "server.key"), path.join(certDir, "tls.key"));
    state = await openStateStore("memory");
    op = await startOperator({
      manifests: [path.join(EXAMPLES, "crew"), path.join(EXAMPLES, "prod")],
      bindingsDir: path.join(dir, "out"),
      state,
      logger: pino({ level: "silent" }),
      probeIntervalMs: 60_000,
      webhook: {
        host: "127.0.0.1",
        port: 0,
        certDir,
        injection: DEFAULT_INJECTION_OPTIONS,
        providerEndpoints: ["*.gpu.svc.cluster.local:11434"],
      },
    });
    dispatcher = new Agent({ connect: { ca: pki.caCert } });
  });
  afterAll(async () => {
    await op?.stop();
    await state?.close();
    await dispatcher?.close();
    await rm(dir, { recursive: true, force: true });
    await pki?.cleanup();
  });

  it("injects the managed providers' host:port and the extra entries; the sidecar allows exactly those", async () => {
    await waitFor(() => op.reconciler.lastResult?.bind.agents.length, "a first bind");
    const agent = op.reconciler.lastResult!.bind.agents.find((a) => a.namespace === "crew-homelab")!;
    const res = await request(`https://127.0.0.1:${op.webhook!.port}${MUTATE_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
          uid: "0f9c1c1e-0000-4000-8000-000000000017",
          kind: { group: "", version: "v1", kind: "Pod" },
          resource: { group: "", version: "v1", resource: "pods" },
          namespace: agent.namespace,
          operation: "CREATE",
          object: {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
              namespace: agent.namespace,
              labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": agent.name },
            },
            spec: { containers: [{ name: "agent", image: "agent:1" }] },
          },
        },
      }),
      dispatcher,
    });
    expect(res.statusCode).toBe(200);
    const body = (await res.body.json()) as { response: { patch?: string } };
    const patch = JSON.parse(Buffer.from(body.response.patch ?? "", "base64").toString("utf8")) as {
      path: string;
      value?: unknown;
    }[];
    const init = patch.find((p) => p.path.startsWith("/spec/initContainers"))!.value;
    const sidecar = (Array.isArray(init) ? init[0] : init) as { env: { name: string; value: string }[] };
    const env = Object.fromEntries(sidecar.env.map((e) => [e.name, e.value]));
    expect(env.KUBEMOOT_PROVIDER_ENDPOINTS).toBe(
      "ollama-a.kubemoot.svc:11434,ollama-b.kubemoot.svc:11434,*.gpu.svc.cluster.local:11434",
    );
    const list = schedulerConfigFromEnv(env).providerEndpoints!;
    expect(list.allows("http://ollama-a.kubemoot.svc:11434")).toBe(true);
    expect(list.allows("http://ollama-b.kubemoot.svc:11434/")).toBe(true);
    expect(list.allows("http://ollama-0.ollama.gpu.svc.cluster.local:11434")).toBe(true);
    expect(list.allows("http://127.0.0.1:11434")).toBe(false);
    expect(list.allows("http://ollama-a.kubemoot.svc:8080")).toBe(false);
    expect(list.allows("http://rogue.kubemoot.svc:11434")).toBe(false);
  });
});
