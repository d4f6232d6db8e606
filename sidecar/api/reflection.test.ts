// Server reflection on the API port, checked with codecs that are not the server's: requests are
// encoded and answers decoded by protobufjs from @grpc/reflection's own reflection.proto and
// sent by grpc-js; the served FileDescriptorProtos are decoded by protobufjs from
// descriptor.proto. Then buf curl, a generic client, lists, describes and calls through it.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiServer, startApiServer } from "./server.js";

const pkgDir = (name: string) => path.dirname(new URL(import.meta.resolve(`${name}/package.json`)).pathname);
const reflectionRoot = (version: string) =>
  protobuf.loadSync(
    path.join(pkgDir("@grpc/reflection"), `build/proto/grpc/reflection/${version}/reflection.proto`),
  );
const FileDescriptorProto = protobuf
  .loadSync(path.join(pkgDir("protobufjs"), "google/protobuf/descriptor.proto"))
  .lookupType("google.protobuf.FileDescriptorProto");

interface DecodedResponse {
  validHost?: string;
  originalRequest?: Record<string, unknown>;
  fileDescriptorResponse?: { fileDescriptorProto: Uint8Array[] };
  allExtensionNumbersResponse?: { baseTypeName: string; extensionNumber: number[] };
  listServicesResponse?: { service: { name: string }[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

const SCHEDULER_FILE = "kubemoot/scheduler/v1/scheduler.proto";
let api: ApiServer;
let client: grpc.Client;

beforeAll(async () => {
  api = await startApiServer({ host: "127.0.0.1", port: 0, impl: { place: async () => ({}) } as never });
  client = new grpc.Client(api.address, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await api?.close();
});

/** Sends raw request messages on one reflection stream; resolves with the raw answers. */
function exchange(version: string, requests: Uint8Array[]): Promise<Buffer[]> {
  const stream = client.makeBidiStreamRequest(
    `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`,
    (b: Uint8Array) => Buffer.from(b),
    (b: Buffer) => b,
  );
  const answers: Buffer[] = [];
  const done = new Promise<Buffer[]>((resolve, reject) => {
    stream.on("data", (m: Buffer) => answers.push(m));
    stream.on("end", () => resolve(answers));
    stream.on("error", reject);
  });
  for (const r of requests) stream.write(r);
  stream.end();
  return done;
}

/** Asks one request per stream message; the answers decoded. */
async function ask(requests: Record<string, unknown>[], version = "v1"): Promise<DecodedResponse[]> {
  const root = reflectionRoot(version);
  const Request = root.lookupType(`grpc.reflection.${version}.ServerReflectionRequest`);
  const Response = root.lookupType(`grpc.reflection.${version}.ServerReflectionResponse`);
  const answers = await exchange(
    version,
    requests.map((r) => Request.encode(Request.fromObject(r)).finish()),
  );
  return answers.map(
    (b) => Response.toObject(Response.decode(b), { defaults: false, arrays: true }) as DecodedResponse,
  );
}
const askOne = async (req: Record<string, unknown>, version?: string) => (await ask([req], version))[0]!;

function files(res: DecodedResponse): { name: string; dependency: string[]; service: { name: string }[] }[] {
  expect(res.errorResponse).toBeUndefined();
  return res.fileDescriptorResponse!.fileDescriptorProto.map(
    (b) =>
      FileDescriptorProto.toObject(FileDescriptorProto.decode(b), { arrays: true }) as {
        name: string;
        dependency: string[];
        service: { name: string }[];
      },
  );
}

/** The scheduler file first, then each of its (transitive) dependencies exactly once. */
function expectSchedulerFiles(res: DecodedResponse): void {
  const all = files(res);
  expect(all[0]!.name).toBe(SCHEDULER_FILE);
  const names = all.map((f) => f.name);
  expect(new Set(names).size).toBe(names.length);
  for (const f of all) for (const dep of f.dependency) expect(names).toContain(dep);
  expect(all[0]!.dependency).toContain("google/protobuf/timestamp.proto");
}

describe("gRPC server reflection", () => {
  for (const version of ["v1", "v1alpha"]) {
    it(`${version}: lists every service served, and answers several requests on one stream in order`, async () => {
      const [list, scheduler, unknown] = await ask(
        [
          { listServices: "" },
          { fileContainingSymbol: "kubemoot.scheduler.v1.SchedulerService" },
          { fileContainingSymbol: "no.such.Thing" },
        ],
        version,
      );
      expect(list!.listServicesResponse!.service.map((s) => s.name).sort()).toEqual([
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
        "kubemoot.scheduler.v1.SchedulerService",
      ]);
      expectSchedulerFiles(scheduler!);
      expect(unknown!.errorResponse!.errorCode).toBe(grpc.status.NOT_FOUND);
    });
  }

  it.each([
    "kubemoot.scheduler.v1.SchedulerService",
    "kubemoot.scheduler.v1.SchedulerService.Place",
    "kubemoot.scheduler.v1.PlaceRequest",
    "kubemoot.scheduler.v1.PlaceRequest.agent",
    "kubemoot.scheduler.v1.Refusal.REASON_GPU_BUSY",
  ])("file_containing_symbol %s serves the scheduler file and its dependencies", async (symbol) => {
    expectSchedulerFiles(await askOne({ fileContainingSymbol: symbol }));
  });

  it.each([
    ["grpc.health.v1.Health", "grpc/health/v1/health.proto", "Health"],
    ["grpc.health.v1.Health.Watch", "grpc/health/v1/health.proto", "Health"],
    ["grpc.health.v1.HealthCheckResponse.SERVING", "grpc/health/v1/health.proto", "Health"],
    ["grpc.reflection.v1.ServerReflection", "grpc/reflection/v1/reflection.proto", "ServerReflection"],
    [
      "grpc.reflection.v1alpha.ServerReflection",
      "grpc/reflection/v1alpha/reflection.proto",
      "ServerReflection",
    ],
  ])("describes %s from %s", async (symbol, file, service) => {
    const [served] = files(await askOne({ fileContainingSymbol: symbol }));
    expect(served!.name).toBe(file);
    expect(served!.service.map((s) => s.name)).toEqual([service]);
  });

  it("file_by_filename serves the named file and its dependencies", async () => {
    expectSchedulerFiles(await askOne({ fileByFilename: SCHEDULER_FILE }));
  });

  it("serves a dependency by its own name and symbols", async () => {
    const served = files(await askOne({ fileContainingSymbol: "google.protobuf.Timestamp" }));
    expect(served.map((f) => f.name)).toEqual(["google/protobuf/timestamp.proto"]);
  });

  it("answers NOT_FOUND for an unknown symbol, file or type", async () => {
    const answers = await ask([
      { fileContainingSymbol: "kubemoot.scheduler.v1.Nope" },
      { fileByFilename: "nope.proto" },
      { allExtensionNumbersOfType: "nope.Nope" },
      { fileContainingExtension: { containingType: "nope.Nope", extensionNumber: 100 } },
      {
        fileContainingExtension: {
          containingType: "kubemoot.scheduler.v1.PlaceRequest",
          extensionNumber: 100,
        },
      },
    ]);
    expect(answers).toHaveLength(5);
    for (const res of answers) {
      expect(res.fileDescriptorResponse).toBeUndefined();
      expect(res.errorResponse?.errorCode).toBe(grpc.status.NOT_FOUND);
      expect(res.errorResponse?.errorMessage).toMatch(/not found/);
    }
  });

  it("answers an empty extension list for a known message type without extensions", async () => {
    const res = await askOne({ allExtensionNumbersOfType: "kubemoot.scheduler.v1.PlaceRequest" });
    expect(res.allExtensionNumbersResponse?.baseTypeName).toBe("kubemoot.scheduler.v1.PlaceRequest");
    expect(res.allExtensionNumbersResponse?.extensionNumber ?? []).toEqual([]);
  });

  it("answers INVALID_ARGUMENT when no message_request is set", async () => {
    expect((await askOne({ host: "h" })).errorResponse).toEqual({
      errorCode: grpc.status.INVALID_ARGUMENT,
      errorMessage: "no message_request",
    });
  });

  it("echoes the host and the original request, in either version", async () => {
    for (const version of ["v1", "v1alpha"]) {
      const req = { host: "api.example:50051", fileContainingSymbol: "kubemoot.scheduler.v1.PlaceRequest" };
      const res = await askOne(req, version);
      expect(res.validHost).toBe(req.host);
      expect(res.originalRequest).toEqual(req);
      const ext = { host: "h", fileContainingExtension: { containingType: "a.B", extensionNumber: 7 } };
      expect((await askOne(ext, version)).originalRequest).toEqual(ext);
    }
  });

  it("skips unknown fields", async () => {
    const Request = reflectionRoot("v1").lookupType("grpc.reflection.v1.ServerReflectionRequest");
    const Response = reflectionRoot("v1").lookupType("grpc.reflection.v1.ServerReflectionResponse");
    const known = Request.encode(Request.fromObject({ listServices: "*" })).finish();
    const [answer] = await exchange("v1", [new Uint8Array([0x40, 0x01, ...known])]); // field 8, varint 1
    const res = Response.toObject(Response.decode(answer!)) as DecodedResponse;
    expect(res.listServicesResponse?.service.length).toBeGreaterThan(0);
  });

  it("ends the stream with INVALID_ARGUMENT on bytes that are not a ServerReflectionRequest", async () => {
    for (const bytes of [
      [0xff, 0xff, 0xff],
      [0x1a, 0x05, 0x61],
    ]) {
      await expect(exchange("v1", [new Uint8Array(bytes)])).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: expect.stringMatching(/^malformed grpc\.reflection\.v1\.ServerReflectionRequest/),
      });
    }
  });
});

describe("buf curl through reflection", () => {
  const buf = (...args: string[]) =>
    promisify(execFile)(path.join(pkgDir("@bufbuild/buf"), "bin/buf"), ["curl", ...args], {
      timeout: 60_000,
    });
  const grpcArgs = ["--protocol", "grpc", "--http2-prior-knowledge"];

  it("lists every method of every service", async () => {
    for (const reflect of ["grpc-v1", "grpc-v1alpha"]) {
      const { stdout } = await buf(
        ...grpcArgs,
        "--reflect-protocol",
        reflect,
        "--list-methods",
        `http://${api.address}`,
      );
      const methods = stdout.trim().split("\n");
      expect(methods).toEqual(
        expect.arrayContaining([
          "grpc.health.v1.Health/Check",
          "grpc.health.v1.Health/List",
          "grpc.health.v1.Health/Watch",
          "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
          "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
          "kubemoot.scheduler.v1.SchedulerService/Place",
          "kubemoot.scheduler.v1.SchedulerService/Wait",
        ]),
      );
      expect(methods).toHaveLength(12);
    }
  });

  it("calls Health with the schema it reflected", async () => {
    const { stdout } = await buf(
      ...grpcArgs,
      "-d",
      '{"service":"kubemoot.liveness"}',
      `http://${api.address}/grpc.health.v1.Health/Check`,
    );
    expect(JSON.parse(stdout)).toEqual({ status: "SERVING" });
  });
});
