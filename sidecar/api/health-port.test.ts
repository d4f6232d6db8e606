// The health-only port beside the API: grpc.health.v1 (asked by a grpc-js client built from
// grpc-health-check's standard proto), /healthz, /readyz and /metrics over plain HTTP, one
// readiness shared with the API port, and nothing that changes state: Place is UNIMPLEMENTED
// over gRPC and 404 over Connect. The API itself stays on loopback.
import net from "node:net";
import os from "node:os";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schedulerClient } from "../../test/helpers/grpc-client.js";
import { checkHealth, type HealthClient, healthClient } from "../../test/helpers/health-client.js";
import { type ApiServer, LIVENESS_SERVICE, startApiServer } from "./server.js";

const SCHEDULER = "kubemoot.scheduler.v1.SchedulerService";
let places = 0;
let api: ApiServer;
let health: HealthClient;

const check = (service: string) => checkHealth(health, service);
const get = async (p: string) => {
  const res = await fetch(`http://${api.healthAddress}${p}`);
  return { status: res.status, body: await res.text() };
};

beforeAll(async () => {
  api = await startApiServer({
    host: "127.0.0.1",
    port: 0,
    health: { host: "127.0.0.1", port: 0 },
    impl: {
      place: async () => {
        places++;
        return {};
      },
    } as never,
    metrics: async () => ({ contentType: "text/plain; version=0.0.4", body: "kubemoot_test_total 1\n" }),
  });
  health = healthClient(api.healthAddress);
});
afterAll(async () => {
  health?.close();
  await api?.close();
});

describe("the health-only port", () => {
  it("answers gRPC health for the server, the scheduler service and liveness", async () => {
    expect(api.healthAddress).not.toBe("");
    expect(api.healthAddress).not.toBe(api.address);
    expect(await check("")).toBe("SERVING");
    expect(await check(SCHEDULER)).toBe("SERVING");
    expect(await check(LIVENESS_SERVICE)).toBe("SERVING");
  });

  it("answers /healthz, /readyz and /metrics over HTTP", async () => {
    expect(await get("/healthz")).toMatchObject({ status: 200 });
    expect(await get("/readyz")).toEqual({ status: 200, body: JSON.stringify({ status: "serving" }) });
    expect(await get("/metrics")).toEqual({ status: 200, body: "kubemoot_test_total 1\n" });
  });

  it("refuses Place: UNIMPLEMENTED over gRPC, 404 over Connect, and the handler never runs", async () => {
    const onHealth = schedulerClient(api.healthAddress);
    try {
      await expect(onHealth.call("Place", { agent: "ns/a" })).rejects.toMatchObject({
        code: grpc.status.UNIMPLEMENTED,
      });
    } finally {
      onHealth.close();
    }
    const res = await fetch(`http://${api.healthAddress}/${SCHEDULER}/Place`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agent: "ns/a" }),
    });
    expect(res.status).toBe(404);
    expect(places).toBe(0);
    // The same call on the API port reaches the handler.
    const onApi = schedulerClient(api.address);
    try {
      await onApi.call("Place", { agent: "ns/a" });
    } finally {
      onApi.close();
    }
    expect(places).toBe(1);
  });

  it("shares readiness with the API port: NOT_SERVING and 503 on both while draining", async () => {
    api.setServing(false);
    try {
      expect(await check(SCHEDULER)).toBe("NOT_SERVING");
      expect(await check("")).toBe("NOT_SERVING");
      expect(await check(LIVENESS_SERVICE)).toBe("SERVING");
      expect(await get("/readyz")).toEqual({ status: 503, body: JSON.stringify({ status: "draining" }) });
      expect((await fetch(`http://${api.address}/readyz`)).status).toBe(503);
    } finally {
      api.setServing(true);
    }
    expect(await check(SCHEDULER)).toBe("SERVING");
  });
});

describe("the API on 127.0.0.1", () => {
  it("is bound to the loopback address and refuses connections on the host's other addresses", async () => {
    expect(api.boundAddress).toBe("127.0.0.1");
    const others = Object.values(os.networkInterfaces())
      .flat()
      .filter((a) => a !== undefined && a.family === "IPv4" && !a.internal)
      .map((a) => a!.address);
    for (const address of others) {
      const err = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
        const s = net.connect(api.port, address);
        s.once("connect", () => {
          s.destroy();
          resolve(undefined);
        });
        s.once("error", resolve);
      });
      expect(err?.code, `API reachable on ${address}:${api.port}`).toBe("ECONNREFUSED");
    }
  });
});
