// NATS over mutual TLS, as the chart configures it (KUBEMOOT_NATS_TLS_CA/_CERT/_KEY): a real
// nats-server that requires a client certificate signed by the test CA (made with openssl).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { natsStateOptions } from "../../src/cli/state-flags.js";
import { ErrorCode } from "../../src/errors/index.js";
import { openStateStore } from "../../src/state/index.js";
import { NatsServer } from "../helpers/nats-server.js";
import { makeTestPki, type TestPki } from "../helpers/pki.js";
import { providerState } from "../helpers/state-fixtures.js";

describe("shared state over NATS with mutual TLS", () => {
  let pki: TestPki;
  let nats: NatsServer;
  beforeAll(async () => {
    pki = await makeTestPki();
    const f = (n: string) => join(pki.dir, n);
    nats = await NatsServer.start({
      extraArgs: [
        "--tls",
        "--tlscert",
        f("server.crt"),
        "--tlskey",
        f("server.key"),
        "--tlscacert",
        f("ca.crt"),
        "--tlsverify",
      ],
    });
  });
  afterAll(async () => {
    await nats?.dispose();
    await pki?.cleanup();
  });

  it("connects with the CA and the client certificate from the environment, and claims work", async () => {
    const f = (n: string) => join(pki.dir, n);
    const options = natsStateOptions({
      KUBEMOOT_NATS_TLS_CA: f("ca.crt"),
      KUBEMOOT_NATS_TLS_CERT: f("client.crt"),
      KUBEMOOT_NATS_TLS_KEY: f("client.key"),
    });
    const store = await openStateStore(nats.url, options);
    try {
      await store.providerWriter.publish(providerState("gpu"));
      const states = await store.providers.list();
      expect(states.map((s) => s.name)).toContain("gpu");
    } finally {
      await store.close();
    }
  });

  it("is refused without a client certificate", async () => {
    const options = natsStateOptions({ KUBEMOOT_NATS_TLS_CA: join(pki.dir, "ca.crt") });
    await expect(openStateStore(nats.url, options)).rejects.toMatchObject({
      code: ErrorCode.StateUnavailable,
    });
  });

  it("refuses to start on a missing file or half a client pair, naming the variable", () => {
    expect(() => natsStateOptions({ KUBEMOOT_NATS_TLS_CA: "/nonexistent/ca.crt" })).toThrow(
      /KUBEMOOT_NATS_TLS_CA: no such file/,
    );
    expect(() => natsStateOptions({ KUBEMOOT_NATS_TLS_CERT: join(pki.dir, "client.crt") })).toThrow(
      /KUBEMOOT_NATS_TLS_KEY: set together with KUBEMOOT_NATS_TLS_CERT/,
    );
    expect(() => natsStateOptions({ KUBEMOOT_KV_REPLICAS: "2" })).toThrow(
      /KUBEMOOT_KV_REPLICAS: expected 1, 3 or 5/,
    );
    expect(natsStateOptions({ KUBEMOOT_KV_REPLICAS: "3" })).toEqual({ replicas: 3, keyLayout: "scoped" });
  });
});
