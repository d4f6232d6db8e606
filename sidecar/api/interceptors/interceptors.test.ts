// The interceptors on a live API server, called over gRPC (grpc-js) and Connect (fetch): the
// identity reaches handlers, metrics count every call by method and code, errors of our family
// leave with their RPC codes.
import type { ServiceImpl } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, KubemootError } from "../../../src/errors/index.js";
import type { SchedulerService } from "../../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { type SchedulerClient, schedulerClient } from "../../../test/helpers/grpc-client.js";
import { type ApiServer, startApiServer } from "../server.js";
import { callerAgent } from "./identity.js";
import { identityInterceptor, metricsInterceptor } from "./index.js";

let api: ApiServer;
let client: SchedulerClient;
const registry = new Registry();
const seenAgents: string[] = [];

beforeAll(async () => {
  api = await startApiServer({
    host: "127.0.0.1",
    port: 0,
    interceptors: [metricsInterceptor(registry), identityInterceptor("crew/a1")],
    impl: {
      place(_req, ctx) {
        seenAgents.push(ctx.values.get(callerAgent));
        return { result: { case: "placement", value: { ticketId: "t" } } };
      },
      renew(req) {
        const code = req.ticketId as keyof typeof ErrorCode;
        throw new KubemootError(ErrorCode[code], `${code} on purpose`);
      },
      async *wait(_req, ctx) {
        seenAgents.push(ctx.values.get(callerAgent));
        yield { event: { case: "standAside", value: {} } };
      },
    } as Partial<ServiceImpl<typeof SchedulerService>> as ServiceImpl<typeof SchedulerService>,
  });
  client = schedulerClient(api.address);
});
afterAll(async () => {
  client?.close();
  await api?.close();
});

async function metricValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as {
    labels: Record<string, string>;
    value: number;
    metricName?: string;
  }[];
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .filter((v) => v.metricName === undefined || v.metricName === `${name}_count`)
    .reduce((sum, v) => sum + v.value, 0);
}

describe("identity", () => {
  it("puts the sidecar's agent into every call's context values, on every protocol", async () => {
    seenAgents.length = 0;
    await client.call("Place", { agent: "other/agent" });
    await fetch(`http://${api.address}/kubemoot.scheduler.v1.SchedulerService/Place`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    await client.stream("Wait", {}).done;
    // The request's own agent field does not change who is calling.
    expect(seenAgents).toEqual(["crew/a1", "crew/a1", "crew/a1"]);
  });
});

describe("errors", () => {
  it.each([
    ["InvalidArgument", grpc.status.INVALID_ARGUMENT],
    ["NotFound", grpc.status.NOT_FOUND],
    ["PermissionDenied", grpc.status.PERMISSION_DENIED],
    ["StateUnavailable", grpc.status.UNAVAILABLE],
    ["ShuttingDown", grpc.status.UNAVAILABLE],
    ["Timeout", grpc.status.DEADLINE_EXCEEDED],
    ["ProviderFailure", grpc.status.INTERNAL],
    ["Internal", grpc.status.INTERNAL],
  ])("a KubemootError %s leaves as gRPC status %i with its message", async (code, status) => {
    await expect(client.call("Renew", { ticketId: code })).rejects.toMatchObject({
      code: status,
      details: `${code} on purpose`,
    });
  });

  it("is the same code over Connect (HTTP status and JSON code)", async () => {
    const res = await fetch(`http://${api.address}/kubemoot.scheduler.v1.SchedulerService/Renew`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ticketId: "NotFound" }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: "not_found", message: "NotFound on purpose" });
  });
});

describe("metrics", () => {
  it("counts calls by method and code, and times unary ones", async () => {
    const place = "kubemoot.scheduler.v1.SchedulerService/Place";
    const renew = "kubemoot.scheduler.v1.SchedulerService/Renew";
    const wait = "kubemoot.scheduler.v1.SchedulerService/Wait";
    const before = {
      placeOk: await metricValue("kubemoot_rpc_calls_total", { method: place, code: "ok" }),
      renewNotFound: await metricValue("kubemoot_rpc_calls_total", { method: renew, code: "not_found" }),
      waitOk: await metricValue("kubemoot_rpc_calls_total", { method: wait, code: "ok" }),
      placeTimed: await metricValue("kubemoot_rpc_duration_seconds", { method: place }),
    };
    await client.call("Place", {});
    await client.call("Place", {});
    await client.call("Renew", { ticketId: "NotFound" }).catch(() => undefined);
    await client.stream("Wait", {}).done;
    expect(await metricValue("kubemoot_rpc_calls_total", { method: place, code: "ok" })).toBe(
      before.placeOk + 2,
    );
    expect(await metricValue("kubemoot_rpc_calls_total", { method: renew, code: "not_found" })).toBe(
      before.renewNotFound + 1,
    );
    // A stream is counted when it ends.
    await expect
      .poll(() => metricValue("kubemoot_rpc_calls_total", { method: wait, code: "ok" }))
      .toBe(before.waitOk + 1);
    expect(await metricValue("kubemoot_rpc_duration_seconds", { method: place })).toBe(before.placeTimed + 2);
    expect(await metricValue("kubemoot_rpc_duration_seconds", { method: wait })).toBe(0);
  });
});
