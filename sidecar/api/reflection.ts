// gRPC server reflection (grpc.reflection.v1 and v1alpha), served from the generated services:
// lists the services served and answers with the FileDescriptorProtos the generated code
// embeds, so that grpcurl and buf curl can describe and call every method without .proto files.
import {
  createRegistry,
  type DescEnum,
  type DescFile,
  type DescService,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import * as v1 from "../../src/gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../src/gen/grpc/reflection/v1alpha/reflection_pb.js";

/** Both versions of the reflection service; serve them beside the services they describe. */
export const REFLECTION_SERVICES = [v1.ServerReflection, v1alpha.ServerReflection] as const;

export interface Reflection {
  v1: ServiceImpl<typeof v1.ServerReflection>;
  v1alpha: ServiceImpl<typeof v1alpha.ServerReflection>;
}

type Request = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;
type Response = MessageInitShape<typeof v1.ServerReflectionResponseSchema>;
type Answer = Response["messageResponse"];

/**
 * Reflection over `services`, the ones the server serves (list the reflection services too):
 * each is listed, and every type of their files and of the files those import can be asked for.
 */
export function createReflection(services: readonly DescService[]): Reflection {
  const files = closure(services.map((s) => s.file));
  const byName = new Map(files.map((f) => [f.proto.name, f]));
  const registry = createRegistry(...files);
  const listed = services.map((s) => ({ name: s.typeName }));
  const serialized = new Map<DescFile, Uint8Array>();

  const withImports = (file: DescFile | undefined, what: string): Answer => {
    if (file === undefined) return error(Code.NotFound, `${what} not found`);
    const fileDescriptorProto = closure([file]).map((f) => {
      let bytes = serialized.get(f);
      if (bytes === undefined) {
        bytes = toBinary(FileDescriptorProtoSchema, f.proto);
        serialized.set(f, bytes);
      }
      return bytes;
    });
    return { case: "fileDescriptorResponse", value: { fileDescriptorProto } };
  };

  const fileOfSymbol = (name: string): DescFile | undefined => {
    const desc = registry.get(name);
    if (desc !== undefined) return desc.file;
    // A member: a method of a service, a field or oneof of a message, or an enum value, which
    // protobuf names in the enum's parent scope ("pkg.VALUE", not "pkg.Enum.VALUE").
    const dot = name.lastIndexOf(".");
    const scope = name.slice(0, dot);
    const member = name.slice(dot + 1);
    const parent = registry.get(scope);
    if (parent?.kind === "service" && parent.methods.some((m) => m.name === member)) return parent.file;
    if (parent?.kind === "message" && [...parent.fields, ...parent.oneofs].some((m) => m.name === member)) {
      return parent.file;
    }
    for (const d of registry) {
      if (d.kind === "enum" && enumScope(d) === scope && d.values.some((v) => v.name === member))
        return d.file;
    }
    return undefined;
  };

  const answer = (req: Request): Answer => {
    const r = req.messageRequest;
    switch (r.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: listed } };
      case "fileByFilename":
        return withImports(byName.get(r.value), `file "${r.value}"`);
      case "fileContainingSymbol":
        return withImports(fileOfSymbol(r.value), `symbol "${r.value}"`);
      case "fileContainingExtension": {
        const { containingType, extensionNumber } = r.value;
        const message = registry.getMessage(containingType);
        if (message === undefined) return error(Code.NotFound, `message type "${containingType}" not found`);
        const file = registry.getExtensionFor(message, extensionNumber)?.file;
        return withImports(file, `extension ${extensionNumber} of "${containingType}"`);
      }
      case "allExtensionNumbersOfType": {
        const message = registry.getMessage(r.value);
        if (message === undefined) return error(Code.NotFound, `message type "${r.value}" not found`);
        const extensionNumber: number[] = [];
        for (const d of registry) {
          if (d.kind === "extension" && d.extendee.typeName === message.typeName)
            extensionNumber.push(d.number);
        }
        extensionNumber.sort((a, b) => a - b);
        return { case: "allExtensionNumbersResponse", value: { baseTypeName: r.value, extensionNumber } };
      }
      default:
        return error(Code.InvalidArgument, "no message_request");
    }
  };

  async function* serverReflectionInfo(requests: AsyncIterable<Request>): AsyncIterable<Response> {
    for await (const req of requests) {
      yield { validHost: req.host, originalRequest: echo(req), messageResponse: answer(req) };
    }
  }
  // v1alpha is v1 under its earlier package: the same shapes, built here as plain objects that
  // connect turns into either version's messages.
  return {
    v1: { serverReflectionInfo },
    v1alpha: { serverReflectionInfo } as unknown as Reflection["v1alpha"],
  };
}

function error(errorCode: Code, errorMessage: string): Answer {
  return { case: "errorResponse", value: { errorCode, errorMessage } };
}

/** The request as original_request, without its own message type (it serves either version). */
function echo(req: Request): Response["originalRequest"] {
  const r = req.messageRequest;
  if (r.case === "fileContainingExtension") {
    const { containingType, extensionNumber } = r.value;
    return { host: req.host, messageRequest: { case: r.case, value: { containingType, extensionNumber } } };
  }
  if (r.case === undefined) return { host: req.host };
  return { host: req.host, messageRequest: { case: r.case, value: r.value } };
}

/** An enum's scope: its values are named in it. */
function enumScope(e: DescEnum): string {
  return e.typeName.slice(0, e.typeName.length - e.name.length - 1);
}

/** The files followed by their imports (transitively), each once: clients resolve types from these. */
function closure(roots: readonly DescFile[]): DescFile[] {
  const seen = new Set<DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f)) return;
    seen.add(f);
    f.dependencies.forEach(visit);
  };
  roots.forEach(visit);
  return [...seen];
}
