// The webhook arm against a REAL HTTPS server (node:https, certificates made with openssl for
// this run), and the ConfigMap arm through the tracker. What is checked on the wire: the body
// cap with and without Content-Length, a redirect neither followed nor leaking the token,
// https only before any I/O, the CA bundle as the trust anchor, the timeout, the bearer token
// sent exactly once, and the client certificate presented to a server that requires one.
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../../src/errors/index.js";
import {
  fetchWebhookSnapshot,
  MAX_SNAPSHOT_BYTES,
  parseTopologySourceArm,
  type SecretObject,
  type SecretReader,
  type SnapshotVerdict,
  TopologySourceTracker,
  type WebhookCredential,
  type WebhookFetchOptions,
} from "../../src/operator/topology/index.js";
import { makeTestPki, type TestPki } from "../helpers/pki.js";
import { type InventoryServer, startInventoryServer } from "./server.js";

const TOKEN = "tok-3f9a1c77e0b2";
const b64 = (s: string) => Buffer.from(s).toString("base64");
const SNAPSHOT = JSON.stringify({
  apiVersion: "topology.kubemoot.ai/v1alpha1",
  revision: "inv-42",
  nodes: { "gpu-1": { "topology.kubemoot.ai/rack": "r1" } },
});

const bearer: WebhookCredential = {
  bearerTokenSecretRef: { namespace: "infra", name: "inv-token", key: "token" },
};
const clientCert: WebhookCredential = {
  clientCertificateSecretRef: { namespace: "infra", name: "inv-client" },
};

// Test double for the topology model's validateSnapshot: apiVersion and revision only.
function stubValidator(doc: unknown): SnapshotVerdict<unknown> {
  const d = doc as { apiVersion?: unknown; revision?: unknown; nodes?: unknown } | null;
  if (d?.apiVersion !== "topology.kubemoot.ai/v1alpha1") {
    return { ok: false, reason: "WrongApiVersion", message: String(d?.apiVersion) };
  }
  return typeof d.revision === "string" && d.revision !== ""
    ? { ok: true, revision: d.revision, nodes: d.nodes }
    : { ok: false, reason: "BlankRevision", message: "revision is blank" };
}

async function failureOf(p: Promise<unknown>): Promise<KubemootError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!KubemootError.is(err)) throw new Error(`expected a KubemootError, got ${String(err)}`);
  return err;
}

describe("webhook arm over real HTTPS", () => {
  let pki: TestPki;
  let server: InventoryServer;
  let secretReads = 0;
  const readSecret: SecretReader = async (ns, name): Promise<SecretObject | undefined> => {
    secretReads += 1;
    if (ns === "infra" && name === "inv-token") return { data: { token: b64(`${TOKEN}\n`) } };
    if (ns === "infra" && name === "inv-client") {
      return { data: { "tls.crt": b64(pki.clientCert), "tls.key": b64(pki.clientKey) } };
    }
    return undefined;
  };
  const pending: (() => void)[] = [];

  const options = (path: string, extra: Partial<WebhookFetchOptions> = {}): WebhookFetchOptions => ({
    url: server.url(path),
    timeoutMs: 5000,
    caBundle: pki.caCert,
    credential: bearer,
    readSecret,
    ...extra,
  });

  beforeAll(async () => {
    pki = await makeTestPki();
    server = await startInventoryServer({
      pki,
      routes: {
        "/snapshot": (_req, res) => {
          res.writeHead(200, { "content-type": "application/json" }).end(SNAPSHOT);
        },
        "/exactly-1mib": (_req, res) => {
          res
            .writeHead(200, { "content-length": String(MAX_SNAPSHOT_BYTES) })
            .end(Buffer.alloc(MAX_SNAPSHOT_BYTES, 0x20));
        },
        "/over-with-length": (_req, res) => {
          res
            .writeHead(200, { "content-length": String(MAX_SNAPSHOT_BYTES + 1) })
            .end(Buffer.alloc(MAX_SNAPSHOT_BYTES + 1, 0x20));
        },
        "/over-chunked": (_req, res) => {
          // No Content-Length: chunked transfer, 64 KiB at a time, one byte too many in all.
          res.writeHead(200, { "content-type": "application/json" });
          const chunk = Buffer.alloc(64 * 1024, 0x20);
          for (let sent = 0; sent < MAX_SNAPSHOT_BYTES; sent += chunk.length) res.write(chunk);
          res.end(Buffer.from(" "));
        },
        "/redirect": (_req, res) => {
          res.writeHead(302, { location: server.url("/redirect-target") }).end();
        },
        "/redirect-target": (_req, res) => {
          res.writeHead(200).end(SNAPSHOT);
        },
        "/slow-headers": (_req, res) => {
          // Holds the answer until the test ends.
          pending.push(() => res.writeHead(200).end(SNAPSHOT));
        },
        "/slow-body": (_req, res) => {
          res.writeHead(200, { "content-length": String(SNAPSHOT.length) });
          res.write(SNAPSHOT.slice(0, 10));
          pending.push(() => res.end(SNAPSHOT.slice(10)));
        },
        "/broken": (_req, res) => {
          res.writeHead(500).end("inventory down");
        },
      },
    });
  });

  afterEach(() => {
    for (const release of pending.splice(0)) release();
  });

  afterAll(async () => {
    await server?.close();
    await pki?.cleanup();
  });

  it("accepts a body: the document text, status and size", async () => {
    const before = server.requests.length;
    const got = await fetchWebhookSnapshot(options("/snapshot"));
    expect(got).toEqual({
      text: SNAPSHOT,
      status: 200,
      bytes: Buffer.byteLength(SNAPSHOT),
      contentType: "application/json",
    });
    expect(server.requests.length).toBe(before + 1);
  });

  it("sends the bearer token exactly once, as Authorization", async () => {
    const before = server.requests.length;
    await fetchWebhookSnapshot(options("/snapshot"));
    const sent = server.requests.slice(before);
    expect(sent).toHaveLength(1);
    const auth = sent[0]!.headers.filter(([name]) => name === "authorization");
    expect(auth).toEqual([["authorization", `Bearer ${TOKEN}`]]);
    // The token goes nowhere else on the request.
    const elsewhere = sent[0]!.headers.filter(([name, v]) => name !== "authorization" && v.includes(TOKEN));
    expect(elsewhere).toEqual([]);
    expect(sent[0]!.path).toBe("/snapshot");
  });

  it("takes a body of exactly 1 MiB", async () => {
    const got = await fetchWebhookSnapshot(options("/exactly-1mib"));
    expect(got.bytes).toBe(MAX_SNAPSHOT_BYTES);
  });

  it("refuses 1 MiB + 1 byte announced by Content-Length", async () => {
    const err = await failureOf(fetchWebhookSnapshot(options("/over-with-length")));
    expect(err.code).toBe(ErrorCode.SourceUnavailable);
    expect(err.message).toBe(
      `webhook ${server.url("/over-with-length")} body of ${MAX_SNAPSHOT_BYTES + 1} bytes is over the ${MAX_SNAPSHOT_BYTES}-byte limit`,
    );
  });

  it("refuses 1 MiB + 1 byte sent without Content-Length, stopping the read", async () => {
    const err = await failureOf(fetchWebhookSnapshot(options("/over-chunked")));
    expect(err.code).toBe(ErrorCode.SourceUnavailable);
    expect(err.message).toContain(`is over the ${MAX_SNAPSHOT_BYTES}-byte limit; stopped reading`);
  });

  it("fails on a 302 naming the status, and never requests the redirect target", async () => {
    const before = server.requests.length;
    const err = await failureOf(fetchWebhookSnapshot(options("/redirect")));
    expect(err.code).toBe(ErrorCode.SourceUnavailable);
    expect(err.message).toContain("answered 302 (a redirect); redirects are not followed");
    expect(err.message).not.toContain(TOKEN);
    expect(server.requests.slice(before).map((r) => r.path)).toEqual(["/redirect"]);
    expect(server.paths()).not.toContain("/redirect-target");
  });

  it("fails on an HTTP error status", async () => {
    const err = await failureOf(fetchWebhookSnapshot(options("/broken")));
    expect(err.message).toBe(`webhook ${server.url("/broken")} answered HTTP 500`);
  });

  it("refuses http:// before any I/O: no Secret read, no connection", async () => {
    let connections = 0;
    const plain = createHttpServer((_req, res) => res.end(SNAPSHOT));
    plain.on("connection", () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    try {
      const port = (plain.address() as AddressInfo).port;
      const reads = secretReads;
      const err = await failureOf(
        fetchWebhookSnapshot(
          options("/", { url: `http://127.0.0.1:${port}/snapshot`, field: "spec.webhook" }),
        ),
      );
      expect(err.code).toBe(ErrorCode.InvalidArgument);
      expect(err.field).toBe("spec.webhook.url");
      expect(err.message).toBe("spec.webhook.url: must use https, got http");
      expect(secretReads).toBe(reads);
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });

  it("refuses a server whose certificate the CA bundle does not sign", async () => {
    const before = server.requests.length;
    const err = await failureOf(fetchWebhookSnapshot(options("/snapshot", { caBundle: pki.otherCaCert })));
    expect(err.code).toBe(ErrorCode.SourceUnavailable);
    expect(err.message).toMatch(/server certificate not trusted \([A-Z_]+\)/);
    // The handshake failed, so no request (and no token) reached the server.
    expect(server.requests.length).toBe(before);
  });

  it("without a CA bundle, the system trust store does not trust the test CA", async () => {
    const err = await failureOf(fetchWebhookSnapshot(options("/snapshot", { caBundle: undefined })));
    expect(err.message).toContain("server certificate not trusted");
  });

  it("times out when the headers do not come", async () => {
    const started = Date.now();
    const err = await failureOf(fetchWebhookSnapshot(options("/slow-headers", { timeoutMs: 300 })));
    expect(err.code).toBe(ErrorCode.Timeout);
    expect(err.message).toBe(`webhook ${server.url("/slow-headers")}: no complete answer within 300 ms`);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("times out when the body stalls", async () => {
    const err = await failureOf(fetchWebhookSnapshot(options("/slow-body", { timeoutMs: 300 })));
    expect(err.code).toBe(ErrorCode.Timeout);
  });

  it("a missing credential Secret fails before any request, naming the Secret only", async () => {
    const before = server.requests.length;
    const err = await failureOf(
      fetchWebhookSnapshot(
        options("/snapshot", {
          credential: { bearerTokenSecretRef: { namespace: "infra", name: "gone", key: "t" } },
        }),
      ),
    );
    expect(err.code).toBe(ErrorCode.NotFound);
    expect(err.message).toBe("webhook.credential.bearerTokenSecretRef: Secret infra/gone not found");
    expect(server.requests.length).toBe(before);
  });

  it("refuses zero or two credentials", async () => {
    const none = await failureOf(
      fetchWebhookSnapshot(options("/snapshot", { credential: {} as WebhookCredential })),
    );
    expect(none.message).toContain("exactly one credential is required");
    const two = await failureOf(
      fetchWebhookSnapshot(
        options("/snapshot", { credential: { ...bearer, ...clientCert } as WebhookCredential }),
      ),
    );
    expect(two.message).toContain("exactly one credential is allowed");
  });

  it("keeps the query (which may hold a secret) out of messages", async () => {
    const err = await failureOf(fetchWebhookSnapshot(options("/broken?sig=abc123")));
    expect(err.message).not.toContain("abc123");
  });

  it("drives a webhook TopologySource end to end: parse the arm, poll, accept", async () => {
    const arm = parseTopologySourceArm({
      webhook: {
        url: server.url("/snapshot"),
        pollInterval: "30s",
        timeout: "5s",
        maxStaleness: "5m",
        caBundle: b64(pki.caCert),
        credential: bearer,
      },
    });
    const tracker = new TopologySourceTracker({
      name: "inventory",
      arm,
      validate: stubValidator,
      selectedNodes: () => 1,
      deps: { readSecret },
    });
    const now = new Date("2026-11-30T12:00:00Z");
    expect(await tracker.poll(now)).toMatchObject({
      ready: true,
      valid: true,
      reason: "Accepted",
      lastSuccessfulRevision: "inv-42",
      selectedNodes: 1,
    });
    expect(tracker.snapshot(now)?.nodes).toEqual({ "gpu-1": { "topology.kubemoot.ai/rack": "r1" } });
  });

  it("a read failure of the webhook keeps the accepted snapshot; the message has no token", async () => {
    let path = "/snapshot";
    const tracker = new TopologySourceTracker({
      name: "inventory",
      arm: parseTopologySourceArm({
        webhook: {
          url: server.url("/snapshot"),
          pollInterval: "30s",
          timeout: "5s",
          maxStaleness: "5m",
          caBundle: pki.caCert,
          credential: bearer,
        },
      }),
      validate: stubValidator,
      selectedNodes: () => 1,
      read: async (signal) => (await fetchWebhookSnapshot({ ...options(path), signal })).text,
    });
    await tracker.poll(new Date("2026-11-30T12:00:00Z"));
    path = "/redirect";
    const s = await tracker.poll(new Date("2026-11-30T12:01:00Z"));
    expect(s).toMatchObject({ ready: true, reason: "ReadFailed", lastSuccessfulRevision: "inv-42" });
    expect(s.message).toContain("answered 302");
    expect(s.message).not.toContain(TOKEN);
  });
});

describe("webhook arm with mTLS", () => {
  let pki: TestPki;
  let server: InventoryServer;
  const readSecret: SecretReader = async (ns, name): Promise<SecretObject | undefined> => {
    if (ns === "infra" && name === "inv-client") {
      return { data: { "tls.crt": b64(pki.clientCert), "tls.key": b64(pki.clientKey) } };
    }
    if (ns === "infra" && name === "inv-token") return { data: { token: b64(TOKEN) } };
    return undefined;
  };

  beforeAll(async () => {
    pki = await makeTestPki();
    server = await startInventoryServer({
      pki,
      requireClientCert: true,
      routes: {
        "/snapshot": (_req, res) => {
          res.writeHead(200, { "content-type": "application/json" }).end(SNAPSHOT);
        },
      },
    });
  });

  afterAll(async () => {
    await server?.close();
    await pki?.cleanup();
  });

  it("presents the client certificate from the Secret to a server that requires one", async () => {
    const got = await fetchWebhookSnapshot({
      url: server.url("/snapshot"),
      timeoutMs: 5000,
      caBundle: pki.caCert,
      credential: clientCert,
      readSecret,
    });
    expect(got.text).toBe(SNAPSHOT);
    expect(server.requests.at(-1)).toMatchObject({ path: "/snapshot", clientCn: pki.clientCn });
    // A client certificate is the one credential: no Authorization header.
    expect(server.requests.at(-1)!.headers.some(([name]) => name === "authorization")).toBe(false);
  });

  it("without the client certificate the server refuses the handshake", async () => {
    const before = server.requests.length;
    const err = await failureOf(
      fetchWebhookSnapshot({
        url: server.url("/snapshot"),
        timeoutMs: 5000,
        caBundle: pki.caCert,
        credential: bearer,
        readSecret,
      }),
    );
    expect(err.code).toBe(ErrorCode.SourceUnavailable);
    expect(err.message).toContain("request failed");
    expect(err.message).not.toContain(TOKEN);
    expect(server.requests.length).toBe(before);
  });
});

describe("configMap arm", () => {
  it("a ConfigMap without the key is a read failure naming ConfigMap and key", async () => {
    const arm = parseTopologySourceArm({
      configMap: {
        configMapRef: { namespace: "infra", name: "racks" },
        key: "snapshot.yaml",
        maxStaleness: "10m",
      },
    });
    const configMaps = new Map<string, { data?: Record<string, string> }>([
      ["infra/racks", { data: { "other.yaml": SNAPSHOT } }],
    ]);
    const tracker = new TopologySourceTracker({
      name: "racks",
      arm,
      validate: stubValidator,
      selectedNodes: () => 2,
      deps: { getConfigMap: (ns, name) => configMaps.get(`${ns}/${name}`) },
    });
    const t0 = new Date("2026-11-30T12:00:00Z");
    expect(await tracker.poll(t0)).toEqual({
      ready: false,
      valid: false,
      reason: "ReadFailed",
      message: 'read failed: ConfigMap infra/racks has no key "snapshot.yaml"',
      selectedNodes: 2,
    });
    configMaps.set("infra/racks", { data: { "snapshot.yaml": SNAPSHOT } });
    expect(await tracker.poll(new Date(t0.getTime() + 1000))).toMatchObject({
      ready: true,
      reason: "Accepted",
      lastSuccessfulRevision: "inv-42",
    });
    configMaps.delete("infra/racks");
    expect(await tracker.poll(new Date(t0.getTime() + 2000))).toMatchObject({
      ready: true,
      reason: "ReadFailed",
      message: expect.stringContaining("read failed: ConfigMap infra/racks not found;"),
    });
  });
});
