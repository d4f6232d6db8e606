// A grpc.health.v1 client built by grpc-js from grpc-health-check's standard health.proto (not
// our server's code, nor our copy of the proto), for the tests of the health endpoints.
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const healthProto = path.join(
  path.dirname(new URL(import.meta.resolve("grpc-health-check/package.json")).pathname),
  "proto/health/v1/health.proto",
);

type CheckFn = (
  req: { service: string },
  cb: (err: grpc.ServiceError | null, res?: { status: string }) => void,
) => void;
type ListFn = (
  req: object,
  cb: (err: grpc.ServiceError | null, res?: { statuses: Record<string, { status: string }> }) => void,
) => void;
type WatchFn = (req: { service: string }) => grpc.ClientReadableStream<{ status: string }>;

export type HealthClient = grpc.Client & { Check: CheckFn; List: ListFn; Watch: WatchFn };

let ctor: (new (addr: string, creds: grpc.ChannelCredentials) => HealthClient) | undefined;

/** A health client for `address` (HOST:PORT), over cleartext HTTP/2. */
export function healthClient(address: string): HealthClient {
  ctor ??= (
    grpc.loadPackageDefinition(protoLoader.loadSync(healthProto, { enums: String })) as unknown as {
      grpc: {
        health: { v1: { Health: new (addr: string, creds: grpc.ChannelCredentials) => HealthClient } };
      };
    }
  ).grpc.health.v1.Health;
  return new ctor(address, grpc.credentials.createInsecure());
}

/** Check's status for `service` ("" for the server as a whole). */
export function checkHealth(client: HealthClient, service: string): Promise<string> {
  return new Promise((resolve, reject) =>
    client.Check({ service }, (err, res) => (err ? reject(err) : resolve(res!.status))),
  );
}
