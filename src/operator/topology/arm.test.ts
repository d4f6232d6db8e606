import { describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { parseTopologySourceArm } from "./arm.js";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const bearer = { bearerTokenSecretRef: { namespace: "infra", name: "inv-token", key: "token" } };
const webhook = {
  url: "https://inventory.infra.svc/topology",
  pollInterval: "1m",
  timeout: "10s",
  maxStaleness: "10m",
  credential: bearer,
};

describe("parseTopologySourceArm", () => {
  it("reads each arm, durations in ms", () => {
    expect(parseTopologySourceArm({ nodeSelector: {}, levels: ["a"], nodeLabels: {} })).toEqual({
      kind: "nodeLabels",
    });
    expect(
      parseTopologySourceArm({
        configMap: {
          configMapRef: { namespace: "infra", name: "racks" },
          key: "snapshot.yaml",
          maxStaleness: "1h",
        },
      }),
    ).toEqual({
      kind: "configMap",
      configMapRef: { namespace: "infra", name: "racks" },
      key: "snapshot.yaml",
      maxStalenessMs: 3_600_000,
    });
    expect(parseTopologySourceArm({ webhook: { ...webhook, caBundle: PEM } })).toEqual({
      kind: "webhook",
      url: "https://inventory.infra.svc/topology",
      pollIntervalMs: 60_000,
      timeoutMs: 10_000,
      maxStalenessMs: 600_000,
      caBundle: PEM,
      credential: bearer,
    });
  });

  it("takes caBundle as PEM text or base64 of PEM", () => {
    const b64 = Buffer.from(PEM).toString("base64");
    expect(parseTopologySourceArm({ webhook: { ...webhook, caBundle: b64 } })).toMatchObject({
      caBundle: PEM,
    });
  });

  it("allows a timeout equal to the poll interval", () => {
    expect(parseTopologySourceArm({ webhook: { ...webhook, timeout: "60s" } })).toMatchObject({
      timeoutMs: 60_000,
    });
  });

  it.each([
    [{}, "spec", "exactly one of nodeLabels, configMap, webhook is required"],
    [{ nodeLabels: {}, webhook }, "spec", "is allowed, got nodeLabels and webhook"],
    [{ nodeLabels: { x: 1 } }, "spec.nodeLabels", "takes no fields"],
    [{ nodeLabels: [] }, "spec.nodeLabels", "expected an object"],
    [{ configMap: { key: "k", maxStaleness: "1m" } }, "spec.configMap.configMapRef", "required"],
    [
      { configMap: { configMapRef: { namespace: "infra", name: "Racks" }, key: "k", maxStaleness: "1m" } },
      "spec.configMap.configMapRef.name",
      '"Racks" is not a valid name',
    ],
    [
      { configMap: { configMapRef: { namespace: "infra", name: "racks" }, maxStaleness: "1m" } },
      "spec.configMap.key",
      "required",
    ],
    [
      { configMap: { configMapRef: { namespace: "infra", name: "racks" }, key: "k" } },
      "spec.configMap.maxStaleness",
      "expected a duration string",
    ],
    [
      { webhook: { ...webhook, url: "http://inventory/topology" } },
      "spec.webhook.url",
      "must use https, got http",
    ],
    [
      { webhook: { ...webhook, url: "https://u:p@inventory/x" } },
      "spec.webhook.url",
      "must not carry user info",
    ],
    [{ webhook: { ...webhook, url: "not a url" } }, "spec.webhook.url", "not a valid URL"],
    [
      { webhook: { ...webhook, timeout: "61s" } },
      "spec.webhook.timeout",
      "61s is longer than pollInterval 1m",
    ],
    [{ webhook: { ...webhook, pollInterval: "1x" } }, "spec.webhook.pollInterval", 'unit "x"'],
    [
      { webhook: { ...webhook, maxStaleness: "0s" } },
      "spec.webhook.maxStaleness",
      "shorter than the minimum",
    ],
    [{ webhook: { ...webhook, caBundle: "hello" } }, "spec.webhook.caBundle", "expected PEM certificates"],
    [{ webhook: { ...webhook, credential: undefined } }, "spec.webhook.credential", "exactly one of"],
    [
      { webhook: { ...webhook, credential: {} } },
      "spec.webhook.credential",
      "exactly one credential is required",
    ],
    [
      {
        webhook: {
          ...webhook,
          credential: { ...bearer, clientCertificateSecretRef: { namespace: "infra", name: "client" } },
        },
      },
      "spec.webhook.credential",
      "exactly one credential is allowed, got bearerTokenSecretRef and clientCertificateSecretRef",
    ],
    [
      { webhook: { ...webhook, credential: { bearerTokenSecretRef: { namespace: "infra", name: "t" } } } },
      "spec.webhook.credential.bearerTokenSecretRef.key",
      "required",
    ],
    [
      { webhook: { ...webhook, credential: { basicAuthSecretRef: { name: "t" } } } },
      "spec.webhook.credential.basicAuthSecretRef.namespace",
      "required",
    ],
    [
      { webhook: { ...webhook, credential: { apiKey: "x" } } },
      "spec.webhook.credential",
      "unknown field apiKey",
    ],
  ])("refuses %j at %s", (spec, field, message) => {
    let err: unknown;
    try {
      parseTopologySourceArm(spec);
    } catch (e) {
      err = e;
    }
    expect(KubemootError.is(err, ErrorCode.InvalidArgument)).toBe(true);
    expect((err as KubemootError).field).toBe(field);
    expect((err as KubemootError).message).toContain(message);
  });

  it("names the path it is given", () => {
    expect(() => parseTopologySourceArm({}, "TopologySource racks: spec")).toThrow(
      /^TopologySource racks: spec: exactly one/,
    );
  });
});
