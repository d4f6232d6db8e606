import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHealth, type HealthClient, healthClient } from "../../test/helpers/health-client.js";
import { type ApiServer, LIVENESS_SERVICE, startApiServer } from "./server.js";

describe("gRPC health", () => {
  let api: ApiServer;
  let client: HealthClient;
  const check = (service: string) => checkHealth(client, service);

  beforeAll(async () => {
    api = await startApiServer({ host: "127.0.0.1", port: 0, impl: { place: async () => ({}) } as never });
    client = healthClient(api.address);
  });
  afterAll(async () => {
    client?.close();
    await api?.close();
  });

  it("answers SERVING for the server, the scheduler service and liveness", async () => {
    expect(await check("")).toBe("SERVING");
    expect(await check("kubemoot.scheduler.v1.SchedulerService")).toBe("SERVING");
    expect(await check(LIVENESS_SERVICE)).toBe("SERVING");
  });

  it("while draining: readiness NOT_SERVING, liveness still SERVING", async () => {
    api.setServing(false);
    expect(await check("kubemoot.scheduler.v1.SchedulerService")).toBe("NOT_SERVING");
    expect(await check("")).toBe("NOT_SERVING");
    expect(await check(LIVENESS_SERVICE)).toBe("SERVING");
    api.setServing(true);
    expect(await check("kubemoot.scheduler.v1.SchedulerService")).toBe("SERVING");
  });

  it("answers NOT_FOUND for a service it does not know", async () => {
    await expect(check("no.such.Service")).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it("lists every service with its status", async () => {
    const res = await new Promise<{ statuses: Record<string, { status: string }> }>((resolve, reject) =>
      client.List({}, (err, r) => (err ? reject(err) : resolve(r!))),
    );
    expect(res.statuses).toEqual({
      "": { status: "SERVING" },
      "kubemoot.scheduler.v1.SchedulerService": { status: "SERVING" },
      [LIVENESS_SERVICE]: { status: "SERVING" },
    });
  });

  it("Watch sends the current status, then each change", async () => {
    const seen: string[] = [];
    const stream = client.Watch({ service: "kubemoot.scheduler.v1.SchedulerService" });
    stream.on("data", (m) => seen.push(m.status));
    stream.on("error", () => undefined);
    await expect.poll(() => seen).toEqual(["SERVING"]);
    api.setServing(false);
    await expect.poll(() => seen).toEqual(["SERVING", "NOT_SERVING"]);
    api.setServing(true);
    await expect.poll(() => seen).toEqual(["SERVING", "NOT_SERVING", "SERVING"]);
    stream.cancel();
  });

  it("Watch of an unknown service answers SERVICE_UNKNOWN and stays open", async () => {
    const seen: string[] = [];
    const stream = client.Watch({ service: "no.such.Service" });
    let ended = false;
    stream.on("data", (m) => seen.push(m.status));
    stream.on("error", () => {
      ended = true;
    });
    stream.on("end", () => {
      ended = true;
    });
    await expect.poll(() => seen).toEqual(["SERVICE_UNKNOWN"]);
    // A change of another service wakes the stream but sends nothing for this one.
    api.setServing(false);
    api.setServing(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual(["SERVICE_UNKNOWN"]);
    expect(ended).toBe(false);
    stream.cancel();
  });
});

describe("gRPC health at shutdown", () => {
  it("ends a Watch with UNAVAILABLE, so that a prober retries", async () => {
    const api = await startApiServer({
      host: "127.0.0.1",
      port: 0,
      impl: { place: async () => ({}) } as never,
    });
    const c = healthClient(api.address);
    const stream = c.Watch({ service: "" });
    stream.on("error", () => undefined);
    const ended = new Promise<grpc.StatusObject>((resolve) => stream.on("status", resolve));
    await new Promise((resolve) => stream.once("data", resolve));
    await api.close();
    expect((await ended).code).toBe(grpc.status.UNAVAILABLE);
    c.close();
  });
});
