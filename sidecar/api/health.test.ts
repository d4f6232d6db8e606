// grpc.health.v1 on the API port, asked by a grpc-js client built from the standard health.proto
// (not our server's code): everything SERVING while up; during a drain readiness goes
// NOT_SERVING while the liveness service stays SERVING.
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiServer, LIVENESS_SERVICE, startApiServer } from "./server.js";

const healthProto = path.join(
  path.dirname(new URL(import.meta.resolve("grpc-health-check/package.json")).pathname),
  "proto/health/v1/health.proto",
);

type CheckFn = (
  req: { service: string },
  cb: (err: grpc.ServiceError | null, res?: { status: string }) => void,
) => void;

describe("gRPC health", () => {
  let api: ApiServer;
  let client: grpc.Client & { Check: CheckFn };
  const check = (service: string) =>
    new Promise<string>((resolve, reject) =>
      client.Check({ service }, (err, res) => (err ? reject(err) : resolve(res!.status))),
    );

  beforeAll(async () => {
    api = await startApiServer({ host: "127.0.0.1", port: 0, impl: { place: async () => ({}) } as never });
    const def = protoLoader.loadSync(healthProto, { enums: String });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      grpc: {
        health: { v1: { Health: new (addr: string, creds: grpc.ChannelCredentials) => typeof client } };
      };
    };
    client = new pkg.grpc.health.v1.Health(api.address, grpc.credentials.createInsecure());
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
});
