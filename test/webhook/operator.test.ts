// The operator serving the injection webhook and its health endpoints (operator --webhook-listen
// --health-listen): the example crew bound in manifests mode, a real AdmissionReview over HTTPS
// (certificates from openssl), the patch carrying the agent's bound env.
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningOperator, startOperator } from "../../src/operator/index.js";
import { DEFAULT_INJECTION_OPTIONS, MUTATE_PATH } from "../../src/operator/webhook/index.js";
import { openStateStore, type StateStore } from "../../src/state/index.js";
import { makeTestPki, type TestPki } from "../helpers/pki.js";
import { EXAMPLES, waitFor } from "../operator/helpers.js";

describe("operator with the injection webhook and health endpoints", () => {
  let pki: TestPki;
  let dir: string;
  let state: StateStore;
  let op: RunningOperator;
  let dispatcher: Agent;

  beforeAll(async () => {
    pki = await makeTestPki();
    dir = await mkdtemp(path.join(tmpdir(), "kubemoot-op-webhook-"));
    const certDir = path.join(dir, "tls");
    await import("node:fs/promises").then((fs) => fs.mkdir(certDir));
    await copyFile(path.join(pki.dir, "server.crt"), path.join(certDir, "tls.crt"));
    await copyFile(path.join(pki.dir, "server.key"), path.join(certDir, "tls.key"));
    state = await openStateStore("memory");
    op = await startOperator({
      manifests: [path.join(EXAMPLES, "crew"), path.join(EXAMPLES, "prod")],
      bindingsDir: path.join(dir, "out"),
      state,
      logger: pino({ level: "silent" }),
      probeIntervalMs: 60_000,
      webhook: { host: "127.0.0.1", port: 0, certDir, injection: DEFAULT_INJECTION_OPTIONS },
      health: { host: "127.0.0.1", port: 0 },
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

  it("injects the sidecar with the agent's bound env into a labelled pod", async () => {
    await waitFor(() => op.reconciler.lastResult?.bind.agents.length, "a first bind");
    const agent = op.reconciler.lastResult!.bind.agents.find((a) => a.namespace === "crew-homelab")!;
    const res = await request(`https://127.0.0.1:${op.webhook!.port}${MUTATE_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
          uid: "0f9c1c1e-0000-4000-8000-000000000001",
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
    const body = (await res.body.json()) as { response: { allowed: boolean; patch?: string } };
    expect(body.response.allowed).toBe(true);
    const patch = JSON.parse(Buffer.from(body.response.patch ?? "", "base64").toString("utf8")) as {
      value?: unknown;
    }[];
    const text = JSON.stringify(patch);
    expect(text).toContain('"restartPolicy":"Always"');
    expect(text).toContain("OLLAMA_HOST");
    expect(text).toContain("KUBEMOOT_MODEL_CANDIDATES_MULLING");
  });

  it("answers /healthz and /readyz once started", async () => {
    const base = `http://127.0.0.1:${op.health!.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });
});
