// The API port's gRPC side as clients see it: grpc-js stubs loaded from .proto files (not our
// server's code) for calls, deadlines, cancellation, reflection and health Watch, and Node's
// own HTTP/2 client for what a well-behaved stub never sends (wrong content-type, compressed
// or oversized messages, several requests on a unary method).
import http2 from "node:http2";
import path from "node:path";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SchedulerService } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { type Json, type SchedulerClient, schedulerClient } from "../../test/helpers/grpc-client.js";
import { frameMessage } from "./grpc/index.js";
import { type ApiServer, startApiServer } from "./server.js";

const pkgDir = (name: string) => path.dirname(new URL(import.meta.resolve(`${name}/package.json`)).pathname);
const reflectionProto = (version: string) =>
  path.join(pkgDir("@grpc/reflection"), `build/proto/grpc/reflection/${version}/reflection.proto`);
const healthProto = path.join(pkgDir("grpc-health-check"), "proto/health/v1/health.proto");

function loadService(
  file: string,
  dotted: string,
): new (
  addr: string,
  creds: grpc.ChannelCredentials,
) => Json {
  const def = protoLoader.loadSync(file, { enums: String, longs: String, defaults: true, oneofs: true });
  let at: Json = grpc.loadPackageDefinition(def);
  for (const part of dotted.split(".")) at = at[part];
  return at as never;
}

let api: ApiServer;
let client: SchedulerClient;
const waitSignals: AbortSignal[] = [];
const internalErrors: string[] = [];

beforeAll(async () => {
  api = await startApiServer({
    host: "127.0.0.1",
    port: 0,
    maxBodyBytes: 1024,
    onInternalError: (err, method) => internalErrors.push(`${method}: ${(err as Error).message}`),
    impl: {
      place: (req) => ({
        result: {
          case: "placement",
          value: { ticketId: `t-${req.agent}`, model: req.candidates[0]?.model ?? "" },
        },
      }),
      release: async (_req, ctx) => {
        // Slow on purpose: ends when the call's signal aborts (deadline) or after 5 s.
        await new Promise((resolve) => {
          const t = setTimeout(resolve, 5000);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(t);
            resolve(undefined);
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
    await expect(client.call("Renew", { ticketId: "x" })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: "ticket_id: no active ticket «x» (100% sure)",
    });
  });

  it("answers INTERNAL for a handler's bug and reports it", async () => {
    await expect(client.call("Attribute", { ticketId: "x" })).rejects.toMatchObject({
      code: grpc.status.INTERNAL,
    });
    expect(internalErrors.some((e) => e.includes("a bug"))).toBe(true);
  });

  it("answers UNIMPLEMENTED for a method the service does not implement", async () => {
    await expect(client.call("EndThread", { agent: "ns/a", threadId: "t" })).rejects.toMatchObject({
      code: grpc.status.UNIMPLEMENTED,
    });
  });

  it("ends a call at the client's deadline with DEADLINE_EXCEEDED and aborts the handler", async () => {
    const started = Date.now();
    const err = await new Promise<grpc.ServiceError>((resolve) =>
      (client.raw as Json).Release(
        { ticketId: "slow" },
        { deadline: Date.now() + 300 },
        (e: grpc.ServiceError) => resolve(e),
      ),
    );
    expect(err.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("aborts a server stream's handler when the client cancels", async () => {
    const before = waitSignals.length;
    const s = client.stream("Wait", { agent: "ns/a" });
    await expect.poll(() => waitSignals.length).toBe(before + 1);
    s.cancel();
    await expect(s.done).rejects.toMatchObject({ code: grpc.status.CANCELLED });
    await expect.poll(() => waitSignals[before]!.aborted).toBe(true);
  });
});

describe("server reflection", () => {
  for (const version of ["v1", "v1alpha"]) {
    it(`${version}: lists the services and serves the scheduler's descriptors`, async () => {
      const Reflection = loadService(reflectionProto(version), `grpc.reflection.${version}.ServerReflection`);
      const c = new Reflection(api.address, grpc.credentials.createInsecure());
      const stream = c.ServerReflectionInfo();
      const answers: Json[] = [];
      const done = new Promise<void>((resolve, reject) => {
        stream.on("data", (m: Json) => answers.push(m));
        stream.on("end", resolve);
        stream.on("error", reject);
      });
      stream.write({ listServices: "" });
      stream.write({ fileContainingSymbol: "kubemoot.scheduler.v1.SchedulerService" });
      stream.write({ fileContainingSymbol: "no.such.Thing" });
      stream.end();
      await done;
      c.close();
      expect(answers).toHaveLength(3);
      const names = answers[0]!.listServicesResponse.service.map((s: Json) => s.name);
      expect(names).toEqual(
        expect.arrayContaining([
          "kubemoot.scheduler.v1.SchedulerService",
          "grpc.health.v1.Health",
          `grpc.reflection.${version}.ServerReflection`,
        ]),
      );
      const files = answers[1]!.fileDescriptorResponse.fileDescriptorProto as Buffer[];
      expect(files.length).toBeGreaterThan(1);
      expect(files[0]!.toString("latin1")).toContain("kubemoot/scheduler/v1/scheduler.proto");
      expect(answers[2]!.errorResponse.errorCode).toBe(grpc.status.NOT_FOUND);
    });
  }
});

describe("health Watch", () => {
  it("sends the current status, then each change", async () => {
    const Health = loadService(healthProto, "grpc.health.v1.Health");
    const c = new Health(api.address, grpc.credentials.createInsecure());
    const seen: string[] = [];
    const stream = c.Watch({ service: "kubemoot.scheduler.v1.SchedulerService" });
    stream.on("data", (m: Json) => seen.push(m.status));
    stream.on("error", () => undefined);
    await expect.poll(() => seen).toEqual(["SERVING"]);
    api.setServing(false);
    await expect.poll(() => seen).toEqual(["SERVING", "NOT_SERVING"]);
    api.setServing(true);
    await expect.poll(() => seen).toEqual(["SERVING", "NOT_SERVING", "SERVING"]);
    stream.cancel();
    c.close();
  });
});

/** One raw HTTP/2 request; resolves with the response headers, trailers and body. */
function raw(
  headers: http2.OutgoingHttpHeaders,
  body: Buffer,
): Promise<{ headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${api.address}`);
    session.on("error", reject);
    const req = session.request({
      ":method": "POST",
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on("response", (h) => {
      head = h;
    });
    req.on("trailers", (t) => {
      trailers = t;
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      session.close();
      resolve({ headers: head, trailers, body: Buffer.concat(chunks) });
    });
    req.on("error", reject);
    // Node's client ends a GET's stream by itself.
    if (headers[":method"] !== "GET") req.end(body);
  });
}

/** The status of a raw call: trailers-only responses carry it in the headers. */
const statusOf = (r: { headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders }) =>
  Number(r.trailers["grpc-status"] ?? r.headers["grpc-status"]);

const PLACE = { ":path": "/kubemoot.scheduler.v1.SchedulerService/Place" };

describe("what well-behaved stubs never send", () => {
  it("unknown method → UNIMPLEMENTED", async () => {
    const r = await raw({ ":path": "/no.Such/Method" }, frameMessage(new Uint8Array()));
    expect(statusOf(r)).toBe(grpc.status.UNIMPLEMENTED);
  });

  it("a content-type other than application/grpc → HTTP 415 with a JSON error", async () => {
    const r = await raw({ ...PLACE, "content-type": "application/json" }, Buffer.from("{}"));
    expect(r.headers[":status"]).toBe(415);
    expect(JSON.parse(r.body.toString()).error).toMatch(/content-type/);
  });

  it("a GET → HTTP 405", async () => {
    const r = await raw({ ...PLACE, ":method": "GET" }, Buffer.alloc(0));
    expect(r.headers[":status"]).toBe(405);
  });

  it("a compressed message or a grpc-encoding other than identity → UNIMPLEMENTED", async () => {
    const compressed = Buffer.from([1, 0, 0, 0, 1, 0]);
    expect(statusOf(await raw(PLACE, compressed))).toBe(grpc.status.UNIMPLEMENTED);
    const r = await raw({ ...PLACE, "grpc-encoding": "gzip" }, frameMessage(new Uint8Array()));
    expect(statusOf(r)).toBe(grpc.status.UNIMPLEMENTED);
  });

  it("a message above the receive limit → RESOURCE_EXHAUSTED", async () => {
    const r = await raw(PLACE, frameMessage(new Uint8Array(2048)));
    expect(statusOf(r)).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it("no message, two messages or a cut message on a unary method → INVALID_ARGUMENT", async () => {
    const one = frameMessage(new Uint8Array());
    for (const body of [
      Buffer.alloc(0),
      Buffer.concat([one, one]),
      frameMessage(new Uint8Array(10)).subarray(0, 8),
    ]) {
      const r = await raw(PLACE, body);
      expect(statusOf(r)).toBe(grpc.status.INVALID_ARGUMENT);
      expect(decodeURIComponent(String(r.headers["grpc-message"] ?? r.trailers["grpc-message"]))).toMatch(
        /expected one request message/,
      );
    }
  });

  it("malformed protobuf → INVALID_ARGUMENT naming the message type", async () => {
    const r = await raw(PLACE, frameMessage(new Uint8Array([0xff, 0xff, 0xff])));
    expect(statusOf(r)).toBe(grpc.status.INVALID_ARGUMENT);
    expect(decodeURIComponent(String(r.headers["grpc-message"]))).toMatch(
      /malformed kubemoot.scheduler.v1.PlaceRequest/,
    );
  });

  it("a malformed grpc-timeout → INVALID_ARGUMENT", async () => {
    const r = await raw({ ...PLACE, "grpc-timeout": "soon" }, frameMessage(new Uint8Array()));
    expect(statusOf(r)).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it("keeps serving after all of the above", async () => {
    const res = await client.call("Place", { agent: "ns/b", candidates: [{ model: "m", score: 1 }] });
    expect(res.placement.ticketId).toBe("t-ns/b");
  });
});
