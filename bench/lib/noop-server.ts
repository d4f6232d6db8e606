// The baseline of the place benchmark: a trivial grpc-js server, in its own process like the
// sidecar, answering SchedulerService/Place with a fixed placement and doing nothing else.
// Prints "listening <port>" when ready.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { PlaceRequestSchema, PlaceResponseSchema } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";

const answer = toBinary(
  PlaceResponseSchema,
  create(PlaceResponseSchema, { result: { case: "placement", value: { ticketId: "noop", model: "noop" } } }),
);
const server = new grpc.Server();
server.addService(
  {
    Place: {
      path: "/kubemoot.scheduler.v1.SchedulerService/Place",
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: unknown) => Buffer.from(toBinary(PlaceRequestSchema, m as never)),
      requestDeserialize: (b: Buffer) => fromBinary(PlaceRequestSchema, b),
      responseSerialize: (b: Uint8Array) => Buffer.from(b),
      responseDeserialize: (b: Buffer) => b,
    },
  },
  { Place: (_call: unknown, cb: grpc.sendUnaryData<Uint8Array>) => cb(null, answer) },
);
server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`listening ${port}\n`);
});
process.on("SIGTERM", () => server.forceShutdown());
