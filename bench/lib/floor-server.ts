// A second reference for the place benchmark: the least any sidecar could do for Place+Release
// with this claim protocol. It serves the same two RPCs on the sidecar's own gRPC server and
// does only the NATS work a warm claim needs — Place writes a ticket (update at revision 0) and
// answers once it is acknowledged; Release sends the delete and answers without waiting, as the
// sidecar does — while a watch follows the tickets bucket as the sidecar's copy does. No
// decision, no bookkeeping. Prints "listening <port>" when ready.
import { randomUUID } from "node:crypto";
import http2 from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { grpcStreamHandler } from "../../sidecar/api/grpc/index.js";
import {
  PlaceResponseSchema,
  ReleaseRequestSchema,
  ReleaseResponseSchema,
} from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { bucketSettings, connectNatsKv, PROVIDER_TICKETS_BUCKET } from "../../src/state/index.js";
import { encodeJson } from "../../src/state/kv.js";
import { ticketJson } from "../../src/state/ticket-codec.js";

const [natsUrl, bucketName = PROVIDER_TICKETS_BUCKET] = process.argv.slice(2);
if (!natsUrl) throw new Error("usage: floor-server <nats-url> [bucket]");
const kv = await connectNatsKv({ servers: natsUrl });
// The tickets bucket's settings, under the name given.
const bucket = await kv.bucket(bucketName, bucketSettings(1)[PROVIDER_TICKETS_BUCKET]!);
const watch = await bucket.watch({ include: "updates" });
void (async () => {
  for await (const _ of watch) {
    // Followed and dropped: the cost of receiving every write is what this stands for.
  }
})();

const SERVICE = "/kubemoot.scheduler.v1.SchedulerService";
const released = toBinary(ReleaseResponseSchema, create(ReleaseResponseSchema, { released: true }));
const methods = new Map([
  [
    `${SERVICE}/Place`,
    {
      kind: "unary" as const,
      handle: async () => {
        const ticketId = randomUUID();
        const now = Date.now();
        const ticket = {
          ticketId,
          provider: "bench-gpu",
          modelFootprintMiB: 4863,
          kvCacheFootprintMiB: 0,
          holderId: "floor",
          claimedAt: new Date(now).toISOString(),
          modelName: "qwen3:8b",
          evicts: {},
          expiresAt: now + 150_000,
          coldLoad: false,
        };
        await bucket.update(`bench-gpu__${ticketId}`, encodeJson(ticketJson(ticket)), 0);
        return toBinary(
          PlaceResponseSchema,
          create(PlaceResponseSchema, {
            result: { case: "placement", value: { ticketId, provider: "bench-gpu", model: "qwen3:8b" } },
          }),
        );
      },
    },
  ],
  [
    `${SERVICE}/Release`,
    {
      kind: "unary" as const,
      handle: (request: Buffer) => {
        const { ticketId } = fromBinary(ReleaseRequestSchema, request);
        bucket.delete(`bench-gpu__${ticketId}`).catch(() => undefined);
        return released;
      },
    },
  ],
]);

const server = http2.createServer();
server.on("stream", grpcStreamHandler({ methods, maxReceiveBytes: 1 << 20 }));
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : 0}\n`);
});
process.on("SIGTERM", () => {
  server.close();
  void kv.close().finally(() => process.exit(0));
});
