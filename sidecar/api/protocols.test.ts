// The three protocols on both HTTP versions of the one port, driven by plain HTTP clients
// (Node's HTTP/2 client, fetch over HTTP/1.1) so that the bytes on the wire are the test's own:
// Connect JSON and binary, gRPC-Web, gRPC; and bytes that are not a PlaceRequest answered
// INVALID_ARGUMENT on each, unary and streaming.
import { create, toBinary } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PlaceRequestSchema,
  PlaceResponseSchema,
  type SchedulerService,
} from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { frame, grpcStatus, grpcWebStatus, h2Request } from "../../test/helpers/raw-http2.js";
import { type ApiServer, startApiServer } from "./server.js";

let api: ApiServer;
const PATH = "/kubemoot.scheduler.v1.SchedulerService";
const placeBytes = toBinary(PlaceRequestSchema, create(PlaceRequestSchema, { agent: "ns/bin" }));
const GARBAGE = new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);

beforeAll(async () => {
  api = await startApiServer({
    host: "127.0.0.1",
    port: 0,
    impl: {
      place: (req) => ({ result: { case: "placement", value: { ticketId: `t-${req.agent}` } } }),
      async *wait(req) {
        yield { event: { case: "standAside", value: { message: req.agent } } };
      },
    } as Partial<ServiceImpl<typeof SchedulerService>> as ServiceImpl<typeof SchedulerService>,
  });
});
afterAll(async () => {
  await api?.close();
});

const http1 = (path: string, contentType: string, body: Uint8Array | string) =>
  fetch(`http://${api.address}${path}`, { method: "POST", headers: { "content-type": contentType }, body });

describe("Connect", () => {
  it("answers JSON over HTTP/2 and HTTP/1.1", async () => {
    const body = JSON.stringify({ agent: "ns/json" });
    const h2 = await h2Request(
      api.address,
      { ":path": `${PATH}/Place`, "content-type": "application/json" },
      Buffer.from(body),
    );
    expect(h2.headers[":status"]).toBe(200);
    expect(JSON.parse(h2.body.toString())).toEqual({ placement: { ticketId: "t-ns/json" } });
    const h1 = await http1(`${PATH}/Place`, "application/json", body);
    expect(h1.status).toBe(200);
    expect(await h1.json()).toEqual({ placement: { ticketId: "t-ns/json" } });
  });

  it("answers binary protobuf", async () => {
    const r = await http1(`${PATH}/Place`, "application/proto", placeBytes);
    expect(r.status).toBe(200);
    expect(Buffer.from(await r.arrayBuffer()).toString("latin1")).toContain("t-ns/bin");
  });

  it("answers malformed protobuf with HTTP 400 invalid_argument naming the message, on both HTTP versions", async () => {
    const h1 = await http1(`${PATH}/Place`, "application/proto", GARBAGE);
    expect(h1.status).toBe(400);
    const err = (await h1.json()) as { code: string; message: string };
    expect(err.code).toBe("invalid_argument");
    expect(err.message).toMatch(/^malformed kubemoot.scheduler.v1.PlaceRequest: /);
    const h2 = await h2Request(
      api.address,
      { ":path": `${PATH}/Place`, "content-type": "application/proto" },
      GARBAGE,
    );
    expect(h2.headers[":status"]).toBe(400);
    expect(JSON.parse(h2.body.toString())).toMatchObject({ code: "invalid_argument" });
  });

  it("answers malformed protobuf on a server stream with invalid_argument", async () => {
    const r = await http1(`${PATH}/Wait`, "application/connect+proto", frame(GARBAGE));
    expect(r.status).toBe(200);
    const body = Buffer.from(await r.arrayBuffer());
    // The end-of-stream frame (flag 2) carries the error as JSON.
    expect(body[0]).toBe(2);
    expect(JSON.parse(body.subarray(5).toString())).toMatchObject({
      error: {
        code: "invalid_argument",
        message: expect.stringMatching(/^malformed kubemoot.scheduler.v1.WaitRequest: /),
      },
    });
  });
});

describe("gRPC-Web", () => {
  const headers = { ":path": `${PATH}/Place`, "content-type": "application/grpc-web+proto" };

  it("answers over HTTP/2 and HTTP/1.1", async () => {
    const h2 = await h2Request(api.address, headers, frame(placeBytes));
    expect(h2.headers[":status"]).toBe(200);
    expect(grpcWebStatus(h2).code).toBe(0);
    expect(h2.body.toString("latin1")).toContain("t-ns/bin");
    const h1 = await http1(`${PATH}/Place`, "application/grpc-web+proto", frame(placeBytes));
    const body = Buffer.from(await h1.arrayBuffer());
    expect(grpcWebStatus({ headers: {}, trailers: {}, body }).code).toBe(0);
    expect(body.toString("latin1")).toContain("t-ns/bin");
  });

  it("answers malformed protobuf with INVALID_ARGUMENT naming the message, unary and streaming", async () => {
    for (const [method, type] of [
      ["Place", "PlaceRequest"],
      ["Wait", "WaitRequest"],
    ]) {
      const r = await h2Request(api.address, { ...headers, ":path": `${PATH}/${method}` }, frame(GARBAGE));
      expect(grpcWebStatus(r)).toEqual({
        code: 3,
        message: expect.stringMatching(new RegExp(`^malformed kubemoot.scheduler.v1.${type}: `)),
      });
    }
  });
});

describe("gRPC", () => {
  const headers = { ":path": `${PATH}/Place`, "content-type": "application/grpc", te: "trailers" };

  it("answers binary protobuf", async () => {
    const r = await h2Request(api.address, headers, frame(placeBytes));
    expect(grpcStatus(r).code).toBe(0);
    expect(r.body.toString("latin1")).toContain("t-ns/bin");
    // The answer's bytes are a PlaceResponse: check with the codec, not only the text.
    expect(
      toBinary(
        PlaceResponseSchema,
        create(PlaceResponseSchema, { result: { case: "placement", value: { ticketId: "t-ns/bin" } } }),
      ),
    ).toEqual(new Uint8Array(r.body.subarray(5)));
  });

  it("answers malformed protobuf with INVALID_ARGUMENT naming the message, unary and streaming", async () => {
    for (const [method, type] of [
      ["Place", "PlaceRequest"],
      ["Wait", "WaitRequest"],
    ]) {
      const r = await h2Request(api.address, { ...headers, ":path": `${PATH}/${method}` }, frame(GARBAGE));
      expect(grpcStatus(r)).toEqual({
        code: 3,
        message: expect.stringMatching(new RegExp(`^malformed kubemoot.scheduler.v1.${type}: `)),
      });
    }
  });
});
