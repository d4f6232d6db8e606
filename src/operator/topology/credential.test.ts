import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import {
  assertSecretNamespace,
  authorizationHeader,
  resolveCredential,
  type SecretObject,
  type SecretReader,
  type WebhookCredential,
} from "./credential.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const TOKEN = "s3cr3t-t0ken-value";
const CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";

function secrets(map: Record<string, Record<string, string>>): SecretReader {
  return async (ns, name) => {
    const data = map[`${ns}/${name}`];
    return data === undefined ? undefined : ({ data } satisfies SecretObject);
  };
}

const bearer: WebhookCredential = { bearerTokenSecretRef: { namespace: "infra", name: "tok", key: "token" } };
const basic: WebhookCredential = { basicAuthSecretRef: { namespace: "infra", name: "basic" } };
const client: WebhookCredential = { clientCertificateSecretRef: { namespace: "infra", name: "client" } };

describe("resolveCredential", () => {
  it("reads a bearer token (base64 in Secret.data), trimming a trailing newline", async () => {
    const c = await resolveCredential(bearer, secrets({ "infra/tok": { token: b64(`${TOKEN}\n`) } }));
    expect(c).toEqual({ kind: "bearer", token: TOKEN });
    expect(authorizationHeader(c)).toBe(`Bearer ${TOKEN}`);
  });

  it("reads basic auth from username and password", async () => {
    const c = await resolveCredential(
      basic,
      secrets({ "infra/basic": { username: b64("inv"), password: b64("pw d") } }),
    );
    expect(authorizationHeader(c)).toBe(`Basic ${b64("inv:pw d")}`);
  });

  it("reads a client certificate from tls.crt and tls.key; no Authorization header", async () => {
    const c = await resolveCredential(
      client,
      secrets({ "infra/client": { "tls.crt": b64(CERT), "tls.key": b64(KEY) } }),
    );
    expect(c).toEqual({ kind: "clientCertificate", cert: CERT, key: KEY });
    expect(authorizationHeader(c)).toBeUndefined();
  });

  it.each([
    [bearer, {}, ErrorCode.NotFound, "Secret infra/tok not found"],
    [
      bearer,
      { "infra/tok": { other: b64("x") } },
      ErrorCode.NotFound,
      'key "token" of Secret infra/tok not found',
    ],
    [bearer, { "infra/tok": { token: b64("  \n") } }, ErrorCode.InvalidConfig, "is empty"],
    [
      bearer,
      { "infra/tok": { token: b64(`${TOKEN}\r\nX-Evil: 1`) } },
      ErrorCode.InvalidConfig,
      "not allowed in an HTTP header",
    ],
    [basic, { "infra/basic": { username: b64("inv") } }, ErrorCode.NotFound, 'key "password"'],
    [
      basic,
      { "infra/basic": { username: b64(`a:${TOKEN}`), password: b64(TOKEN) } },
      ErrorCode.InvalidConfig,
      'contains ":"',
    ],
    [
      client,
      { "infra/client": { "tls.crt": b64(TOKEN), "tls.key": b64(KEY) } },
      ErrorCode.InvalidConfig,
      "not a PEM certificate",
    ],
    [
      client,
      { "infra/client": { "tls.crt": b64(CERT), "tls.key": b64(TOKEN) } },
      ErrorCode.InvalidConfig,
      "not a PEM private key",
    ],
  ])("%j with %j fails %s (%s), never quoting the secret", async (cred, data, code, message) => {
    const err = await resolveCredential(cred, secrets(data), "spec.webhook.credential").catch(
      (e: unknown) => e,
    );
    expect(KubemootError.is(err, code)).toBe(true);
    expect((err as KubemootError).message).toContain(message);
    expect((err as KubemootError).message).not.toContain(TOKEN);
    expect((err as KubemootError).field).toMatch(/^spec\.webhook\.credential\./);
  });
});

describe("assertSecretNamespace", () => {
  it("accepts a Secret in the operator's namespace, for every arm", () => {
    for (const c of [bearer, basic, client]) expect(() => assertSecretNamespace(c, "infra")).not.toThrow();
  });

  it.each([
    [bearer, "credential.bearerTokenSecretRef.namespace"],
    [basic, "credential.basicAuthSecretRef.namespace"],
    [client, "credential.clientCertificateSecretRef.namespace"],
  ])("refuses a Secret in another namespace, naming the field and both namespaces", (c, field) => {
    const err = (() => {
      try {
        assertSecretNamespace(c, "kubemoot");
      } catch (e) {
        return e as KubemootError;
      }
      return undefined;
    })();
    expect(err?.code).toBe(ErrorCode.InvalidArgument);
    expect(err?.field).toBe(field);
    expect(err?.message).toMatch(/Secret infra\/\S+ is outside the operator's namespace "kubemoot"/);
  });
});
