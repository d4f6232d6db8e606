// Server reflection, checked with an independent codec: requests are encoded and responses decoded by
// protobufjs from grpc-js's own reflection.proto, and the served FileDescriptorProtos by protobufjs
// from descriptor.proto, so our hand-written wire format is not checked against itself.
import path from "node:path";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { file_kubemoot_scheduler_v1_scheduler } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { createReflection, REFLECTION_SERVICES } from "./reflection.js";

const pkgDir = (name: string) => path.dirname(new URL(import.meta.resolve(`${name}/package.json`)).pathname);
const reflectionRoot = protobuf.loadSync(
  path.join(pkgDir("@grpc/reflection"), "build/proto/grpc/reflection/v1/reflection.proto"),
);
const Request = reflectionRoot.lookupType("grpc.reflection.v1.ServerReflectionRequest");
const Response = reflectionRoot.lookupType("grpc.reflection.v1.ServerReflectionResponse");
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
const reflect = createReflection({
  files: [file_kubemoot_scheduler_v1_scheduler],
  extraServices: ["grpc.health.v1.Health"],
});

function ask(req: Record<string, unknown>): DecodedResponse {
  const bytes = Request.encode(Request.fromObject(req)).finish();
  const res = Response.decode(reflect(bytes));
  return Response.toObject(res, { defaults: false, arrays: true }) as DecodedResponse;
}

function fileNames(res: DecodedResponse): { name: string; dependency: string[] }[] {
  expect(res.errorResponse).toBeUndefined();
  return res.fileDescriptorResponse!.fileDescriptorProto.map(
    (b) =>
      FileDescriptorProto.toObject(FileDescriptorProto.decode(b), { arrays: true }) as {
        name: string;
        dependency: string[];
      },
  );
}

/** The scheduler file first, then each of its (transitive) dependencies exactly once. */
function expectSchedulerFiles(res: DecodedResponse): void {
  const files = fileNames(res);
  expect(files[0]!.name).toBe(SCHEDULER_FILE);
  const names = files.map((f) => f.name);
  expect(new Set(names).size).toBe(names.length);
  for (const f of files) for (const dep of f.dependency) expect(names).toContain(dep);
  expect(files[0]!.dependency).toContain("google/protobuf/timestamp.proto");
}

describe("gRPC server reflection", () => {
  it("lists the files' services, the extra services and reflection itself", () => {
    const names = ask({ listServices: "" }).listServicesResponse!.service.map((s) => s.name);
    expect(names).toContain("kubemoot.scheduler.v1.SchedulerService");
    expect(names).toContain("grpc.health.v1.Health");
    for (const s of REFLECTION_SERVICES) expect(names).toContain(s);
    expect(REFLECTION_SERVICES).toEqual([
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
    ]);
  });

  it.each([
    "kubemoot.scheduler.v1.SchedulerService",
    "kubemoot.scheduler.v1.SchedulerService.Place",
    "kubemoot.scheduler.v1.PlaceRequest",
  ])("file_containing_symbol %s serves the scheduler file and its dependencies", (symbol) => {
    expectSchedulerFiles(ask({ fileContainingSymbol: symbol }));
  });

  it("file_by_filename serves the named file and its dependencies", () => {
    expectSchedulerFiles(ask({ fileByFilename: SCHEDULER_FILE }));
  });

  it("serves a dependency by its own name and symbols", () => {
    const files = fileNames(ask({ fileContainingSymbol: "google.protobuf.Timestamp" }));
    expect(files.map((f) => f.name)).toEqual(["google/protobuf/timestamp.proto"]);
  });

  it("answers NOT_FOUND for an unknown symbol, file or type", () => {
    for (const req of [
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
    ]) {
      const res = ask(req);
      expect(res.fileDescriptorResponse).toBeUndefined();
      expect(res.errorResponse?.errorCode).toBe(5);
      expect(res.errorResponse?.errorMessage).toMatch(/not found/);
    }
  });

  it("answers an empty extension list for a known message type without extensions", () => {
    const res = ask({ allExtensionNumbersOfType: "kubemoot.scheduler.v1.PlaceRequest" });
    expect(res.allExtensionNumbersResponse?.baseTypeName).toBe("kubemoot.scheduler.v1.PlaceRequest");
    expect(res.allExtensionNumbersResponse?.extensionNumber ?? []).toEqual([]);
  });

  it("answers INVALID_ARGUMENT when no message_request is set", () => {
    expect(ask({ host: "h" }).errorResponse).toEqual({ errorCode: 3, errorMessage: "no message_request" });
  });

  it("echoes the host and the original request", () => {
    const req = { host: "api.example:50051", fileContainingSymbol: "kubemoot.scheduler.v1.PlaceRequest" };
    const res = ask(req);
    expect(res.validHost).toBe(req.host);
    expect(res.originalRequest).toEqual(req);
    const ext = { host: "h", fileContainingExtension: { containingType: "a.B", extensionNumber: 7 } };
    expect(ask(ext).originalRequest).toEqual(ext);
  });

  it("skips unknown fields", () => {
    const known = Request.encode(Request.fromObject({ listServices: "*" })).finish();
    const bytes = new Uint8Array([0x40, 0x01, ...known]); // field 8, varint 1
    const res = Response.toObject(Response.decode(reflect(bytes))) as DecodedResponse;
    expect(res.listServicesResponse?.service.length).toBeGreaterThan(0);
  });

  it("throws on bytes that are not a ServerReflectionRequest", () => {
    expect(() => reflect(new Uint8Array([0xff, 0xff, 0xff]))).toThrow(/^malformed ServerReflectionRequest/);
    expect(() => reflect(new Uint8Array([0x1a, 0x05, 0x61]))).toThrow(/^malformed ServerReflectionRequest/);
  });
});
