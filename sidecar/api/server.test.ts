// The API port's gRPC side as clients see it: grpc-js stubs loaded from .proto files (not our
// server's library) for calls, deadlines, cancellation and compression, and Node's own HTTP/2
// client for what a well-behaved stub never sends (wrong content-type, cut or oversized
// messages, several requests on a unary method).
import { Writable } from "node:stream";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SchedulerService } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { type Json, type SchedulerClient, schedulerClient } from "../../test/helpers/grpc-client.js";
import { frame, grpcStatus, h2Request } from "../../test/helpers/raw-http2.js";
import { loggingInterceptor } from "./interceptors/index.js";
import { type ApiServer, startApiServer } from "./server.js";

let api: ApiServer;
let client: SchedulerClient;
const waitSignals: AbortSignal[] = [];
const releaseSignals: AbortSignal[] = [];
const logLines: Json[] = [];

beforeAll(async () => {
  const logSink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  api = await startApiServer({
    host: "127.0.0.1",
    port: 0,
    maxBodyBytes: 1024,
    interceptors: [loggingInterceptor(pino({ level: "info" }, logSink))],
    impl: {
      place: (req) => ({
        result: {
          case: "placement",
          value: { ticketId: `t-${req.agent}`, model: req.candidates[0]?.model ?? "" },
        },
      }),
      release: async (_req, ctx) => {
        releaseSignals.push(ctx.signal);
        // Slow on purpose: fails with the call's abort reason (its deadline, a cancel), as a
        // handler that respects its signal does, or answers after 5 s.
        await new Promise((resolve, reject) => {
          const t = setTimeout(resolve, 5000);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(t);
            reject(ctx.signal.reason);
          });
        });
        return { released: true };
      },
      renew: () => {
        throw new ConnectError("ticket_id: no active ticket «x» (100% sure)", Code.NotFound);
      },
      attribute: () => {
        throw new Error("a bug");
      },
      wait: async function* (_req, ctx) {
        waitSignals.push(ctx.signal);
        yield { event: { case: "waiting", value: {} } };
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      },
      // commit and endThread left out: UNIMPLEMENTED.
    } as Partial<ServiceImpl<typeof SchedulerService>> as ServiceImpl<typeof SchedulerService>,
  });
  client = schedulerClient(api.address);
});
afterAll(async () => {
  client?.close();
  await api?.close();
});

describe("gRPC calls", () => {
  it("answers a unary call", async () => {
    const res = await client.call("Place", { agent: "ns/a", candidates: [{ model: "qwen3:8b", score: 1 }] });
    expect(res.placement).toMatchObject({ ticketId: "t-ns/a", model: "qwen3:8b" });
  });

  it("carries the handler's status and a non-ASCII message intact", async () => {
    const message = "ticket_id: no active ticket «x» (100% sure)";
    const raw = grpcStatus(
      await h2Request(
        api.address,
        { ...PLACE, ":path": PLACE[":path"].replace("Place", "Renew") },
        frame(new Uint8Array()),
      ),
    );
    expect(raw).toEqual({ code: grpc.status.NOT_FOUND, message });
    // connect-node percent-encodes grpc-message as encodeURIComponent does (reserved characters
    // too) and grpc-js decodes it as decodeURI does (not them): a ':' reaches grpc-js callers as
    // "%3A"; non-ASCII and '%' arrive intact.
    await expect(client.call("Renew", { ticketId: "x" })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: decodeURI(encodeURIComponent(message)),
    });
  });

  it("answers INTERNAL for a handler's bug and logs it with the method", async () => {
    await expect(client.call("Attribute", { ticketId: "x" })).rejects.toMatchObject({
      code: grpc.status.INTERNAL,
      details: "a bug",
    });
    expect(logLines).toContainEqual(
      expect.objectContaining({
        msg: "internal error in handler",
        method: "Attribute",
        err: expect.objectContaining({ message: "a bug" }),
      }),
    );
  });

  it("answers UNIMPLEMENTED for a method the service does not implement", async () => {
    await expect(client.call("EndThread", { agent: "ns/a", threadId: "t" })).rejects.toMatchObject({
      code: grpc.status.UNIMPLEMENTED,
    });
  });

  it("ends a call at the client's deadline with DEADLINE_EXCEEDED and aborts the handler", async () => {
    const started = Date.now();
    const before = releaseSignals.length;
    const err = await new Promise<grpc.ServiceError>((resolve) =>
      (client.raw as Json).Release(
        { ticketId: "slow" },
        { deadline: Date.now() + 300 },
        (e: grpc.ServiceError) => resolve(e),
      ),
    );
    expect(err.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(4000);
    // grpc-js cancels its stream at the same deadline, so the handler's signal ends with
    // whichever comes first (the server's timer or the client's cancel): both free it.
    await expect.poll(() => releaseSignals[before]?.aborted).toBe(true);
  });

  it("reads grpc-timeout itself: a client that never cancels still gets DEADLINE_EXCEEDED", async () => {
    const before = releaseSignals.length;
    const path = PLACE[":path"].replace("Place", "Release");
    // No client-side deadline here, only the header: the server's own timer ends the call.
    const r = await h2Request(
      api.address,
      { ...PLACE, ":path": path, "grpc-timeout": "300m" },
      frame(new Uint8Array()),
    );
    expect(grpcStatus(r).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(releaseSignals[before]?.aborted).toBe(true);
    expect(releaseSignals[before]!.reason).toMatchObject({ code: Code.DeadlineExceeded });
  });

  it("aborts a server stream's handler when the client cancels", async () => {
    const before = waitSignals.length;
    const s = client.stream("Wait", { agent: "ns/a" });
    await expect.poll(() => waitSignals.length).toBe(before + 1);
    s.cancel();
    await expect(s.done).rejects.toMatchObject({ code: grpc.status.CANCELLED });
    await expect.poll(() => waitSignals[before]!.aborted).toBe(true);
  });

  it("accepts gzip-compressed requests", async () => {
    const gzipClient = new grpc.Client(api.address, grpc.credentials.createInsecure(), {
      "grpc.default_compression_algorithm": grpc.compressionAlgorithms.gzip,
    });
    try {
      const answer = await new Promise<Buffer>((resolve, reject) =>
        gzipClient.makeUnaryRequest(
          "/kubemoot.scheduler.v1.SchedulerService/Place",
          (x: Buffer) => x,
          (x: Buffer) => x,
          // agent "ns/gz" (field 1), as a PlaceRequest's bytes; grpc-js gzips the message.
          Buffer.from([0x0a, 0x05, ...Buffer.from("ns/gz")]),
          (err, res) => (err ? reject(err) : resolve(res!)),
        ),
      );
      expect(answer.toString("latin1")).toContain("t-ns/gz");
    } finally {
      gzipClient.close();
    }
    // And the same bytes framed by hand with the compressed flag, gzipped, as the protocol says.
    const { gzipSync } = await import("node:zlib");
    const r = await h2Request(
      api.address,
      { ...PLACE, "grpc-encoding": "gzip" },
      frame(gzipSync(Buffer.from([0x0a, 0x05, ...Buffer.from("ns/gy")])), 1),
    );
    expect(grpcStatus(r).code).toBe(grpc.status.OK);
    expect(r.body.toString("latin1")).toContain("t-ns/gy");
  });
});

const PLACE = {
  ":path": "/kubemoot.scheduler.v1.SchedulerService/Place",
  "content-type": "application/grpc",
  te: "trailers",
};

describe("what well-behaved stubs never send", () => {
  it("unknown method → HTTP 404, which gRPC clients read as UNIMPLEMENTED", async () => {
    const r = await h2Request(api.address, { ...PLACE, ":path": "/no.Such/Method" }, frame(new Uint8Array()));
    expect(r.headers[":status"]).toBe(404);
    const Stub = grpc.makeGenericClientConstructor({}, "");
    const c = new Stub(api.address, grpc.credentials.createInsecure());
    const err = await new Promise<grpc.ServiceError>((resolve) =>
      c.makeUnaryRequest(
        "/no.Such/Method",
        (x: Buffer) => x,
        (x: Buffer) => x,
        Buffer.alloc(0),
        (e) => resolve(e!),
      ),
    );
    c.close();
    expect(err.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it("a content-type no protocol speaks → HTTP 415", async () => {
    const r = await h2Request(api.address, { ...PLACE, "content-type": "text/plain" }, Buffer.from("{}"));
    expect(r.headers[":status"]).toBe(415);
  });

  it("a GET → HTTP 405", async () => {
    const r = await h2Request(api.address, { ...PLACE, ":method": "GET" });
    expect(r.headers[":status"]).toBe(405);
  });

  it("a compressed message without a grpc-encoding, or an unknown encoding → refused", async () => {
    const flagged = await h2Request(api.address, PLACE, frame(new Uint8Array([0]), 1));
    expect(grpcStatus(flagged).code).toBe(grpc.status.INTERNAL);
    expect(grpcStatus(flagged).message).toMatch(/compressed/);
    const r = await h2Request(api.address, { ...PLACE, "grpc-encoding": "snappy" }, frame(new Uint8Array()));
    expect(grpcStatus(r).code).toBe(grpc.status.UNIMPLEMENTED);
    expect(r.trailers["grpc-accept-encoding"] ?? r.headers["grpc-accept-encoding"]).toMatch(/gzip/);
  });

  it("a message above the receive limit → RESOURCE_EXHAUSTED", async () => {
    const r = await h2Request(api.address, PLACE, frame(new Uint8Array(2048)));
    expect(grpcStatus(r).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it("no message or two messages on a unary method → UNIMPLEMENTED; a cut message → INVALID_ARGUMENT", async () => {
    const one = frame(new Uint8Array());
    for (const body of [Buffer.alloc(0), Buffer.concat([one, one])]) {
      const status = grpcStatus(await h2Request(api.address, PLACE, body));
      expect(status.code).toBe(grpc.status.UNIMPLEMENTED);
      expect(status.message).toMatch(/(missing|extra) input message for unary method/);
    }
    const cut = grpcStatus(await h2Request(api.address, PLACE, frame(new Uint8Array(10)).subarray(0, 8)));
    expect(cut.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(cut.message).toMatch(/incomplete envelope/);
  });

  it("malformed protobuf → INVALID_ARGUMENT naming the message type", async () => {
    const r = await h2Request(api.address, PLACE, frame(new Uint8Array([0xff, 0xff, 0xff])));
    expect(grpcStatus(r).code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(grpcStatus(r).message).toMatch(/^malformed kubemoot.scheduler.v1.PlaceRequest: /);
  });

  it("a malformed grpc-timeout → INVALID_ARGUMENT", async () => {
    const r = await h2Request(api.address, { ...PLACE, "grpc-timeout": "soon" }, frame(new Uint8Array()));
    expect(grpcStatus(r).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it("keeps serving after all of the above", async () => {
    const res = await client.call("Place", { agent: "ns/b", candidates: [{ model: "m", score: 1 }] });
    expect(res.placement.ticketId).toBe("t-ns/b");
  });
});
