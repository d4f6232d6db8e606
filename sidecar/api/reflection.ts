// gRPC server reflection (grpc.reflection.v1 and v1alpha, which share one wire format) as a pure
// function from one ServerReflectionRequest's bytes to one ServerReflectionResponse's bytes. The
// HTTP/2 server owns the bidi stream and framing and calls this once per request message. The
// messages are hand-coded with BinaryReader/BinaryWriter so that no reflection.proto has to be
// generated or shipped for six small messages.
import type { DescEnum, DescFile, DescMessage } from "@bufbuild/protobuf";
import { toBinary } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { GrpcCode, malformedMessage } from "./grpc/index.js";

export interface ReflectionOptions {
  /** Files whose services are listed and whose descriptors (and their dependencies, transitively) are served. */
  files: readonly DescFile[];
  /** Extra fully-qualified service names to list (e.g. "grpc.health.v1.Health") without descriptors. */
  extraServices?: readonly string[];
}

export const REFLECTION_SERVICES: readonly string[] = [
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
];

const { INVALID_ARGUMENT, NOT_FOUND } = GrpcCode;

type MessageRequest =
  | { kind: "none" }
  | { kind: "fileByFilename"; value: string }
  | { kind: "fileContainingSymbol"; value: string }
  | { kind: "fileContainingExtension"; containingType: string; extensionNumber: number }
  | { kind: "allExtensionNumbersOfType"; value: string }
  | { kind: "listServices"; value: string };

interface ReflectionRequest {
  host: string;
  request: MessageRequest;
}

/** Answers one ServerReflectionRequest (its protobuf bytes) with one ServerReflectionResponse (bytes). */
export function createReflection(opts: ReflectionOptions): (request: Uint8Array) => Uint8Array {
  const index = buildIndex(opts.files);
  const services = [
    ...new Set([
      ...opts.files.flatMap((f) => f.services.map((s) => s.typeName)),
      ...(opts.extraServices ?? []),
      ...REFLECTION_SERVICES,
    ]),
  ];
  return (bytes) => {
    const req = decodeRequest(bytes);
    const w = new BinaryWriter();
    if (req.host !== "") w.tag(1, WireType.LengthDelimited).string(req.host);
    w.tag(2, WireType.LengthDelimited).bytes(encodeRequest(req));
    const [field, message] = answer(req.request, index, services);
    return w.tag(field, WireType.LengthDelimited).bytes(message).finish();
  };
}

/** The message_response oneof for one request, as its field number and encoded message. */
type Oneof = [field: number, message: Uint8Array];

function answer(r: MessageRequest, index: Index, services: readonly string[]): Oneof {
  const files = (file: DescFile | undefined, what: string): Oneof => {
    if (!file) return error(NOT_FOUND, `${what} not found`);
    const fdr = new BinaryWriter();
    for (const f of closure(file)) fdr.tag(1, WireType.LengthDelimited).bytes(serialize(f));
    return [4, fdr.finish()];
  };
  switch (r.kind) {
    case "none":
      return error(INVALID_ARGUMENT, "no message_request");
    case "listServices": {
      const list = new BinaryWriter();
      for (const name of services) {
        const service = new BinaryWriter().tag(1, WireType.LengthDelimited).string(name).finish();
        list.tag(1, WireType.LengthDelimited).bytes(service);
      }
      return [6, list.finish()];
    }
    case "fileByFilename":
      return files(index.byFilename.get(r.value), `file "${r.value}"`);
    case "fileContainingSymbol":
      return files(index.bySymbol.get(r.value), `symbol "${r.value}"`);
    case "fileContainingExtension": {
      if (!index.messages.has(r.containingType)) {
        return error(NOT_FOUND, `message type "${r.containingType}" not found`);
      }
      const file = index.extensions.get(r.containingType)?.get(r.extensionNumber);
      return files(file, `extension ${r.extensionNumber} of "${r.containingType}"`);
    }
    case "allExtensionNumbersOfType": {
      if (!index.messages.has(r.value)) return error(NOT_FOUND, `message type "${r.value}" not found`);
      const numbers = [...(index.extensions.get(r.value)?.keys() ?? [])].sort((a, b) => a - b);
      const enr = new BinaryWriter().tag(1, WireType.LengthDelimited).string(r.value);
      for (const n of numbers) enr.tag(2, WireType.Varint).int32(n);
      return [5, enr.finish()];
    }
  }
}

function error(code: number, message: string): Oneof {
  const e = new BinaryWriter().tag(1, WireType.Varint).int32(code);
  return [7, e.tag(2, WireType.LengthDelimited).string(message).finish()];
}

const serialized = new WeakMap<DescFile, Uint8Array>();
function serialize(file: DescFile): Uint8Array {
  let b = serialized.get(file);
  if (!b) {
    b = toBinary(FileDescriptorProtoSchema, file.proto);
    serialized.set(file, b);
  }
  return b;
}

/** The file followed by its transitive dependencies, each once: clients resolve imports from these. */
function closure(file: DescFile): DescFile[] {
  const seen = new Set<DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f)) return;
    seen.add(f);
    f.dependencies.forEach(visit);
  };
  visit(file);
  return [...seen];
}

interface Index {
  byFilename: Map<string, DescFile>;
  bySymbol: Map<string, DescFile>;
  messages: Set<string>;
  /** extendee type name → extension number → declaring file */
  extensions: Map<string, Map<number, DescFile>>;
}

// Dependencies are indexed too, so a client can ask for e.g. google.protobuf.Timestamp by name
// after seeing it referenced; only the given files' services are listed, though.
function buildIndex(roots: readonly DescFile[]): Index {
  const index: Index = {
    byFilename: new Map(),
    bySymbol: new Map(),
    messages: new Set(),
    extensions: new Map(),
  };
  const sym = (name: string, file: DescFile) => {
    if (!index.bySymbol.has(name)) index.bySymbol.set(name, file);
  };
  const addExtensions = (file: DescFile, exts: DescFile["extensions"]) => {
    for (const ext of exts) {
      sym(ext.typeName, file);
      const byNo = index.extensions.get(ext.extendee.typeName) ?? new Map<number, DescFile>();
      index.extensions.set(ext.extendee.typeName, byNo);
      byNo.set(ext.number, file);
    }
  };
  // Enum values live in the enum's parent scope in protobuf naming ("pkg.VALUE", not "pkg.Enum.VALUE").
  const addEnum = (file: DescFile, e: DescEnum) => {
    sym(e.typeName, file);
    const scope = e.typeName.slice(0, e.typeName.length - e.name.length);
    for (const v of e.values) sym(scope + v.name, file);
  };
  const addMessage = (file: DescFile, m: DescMessage) => {
    sym(m.typeName, file);
    index.messages.add(m.typeName);
    for (const f of m.fields) sym(`${m.typeName}.${f.name}`, file);
    for (const o of m.oneofs) sym(`${m.typeName}.${o.name}`, file);
    for (const n of m.nestedMessages) addMessage(file, n);
    for (const e of m.nestedEnums) addEnum(file, e);
    addExtensions(file, m.nestedExtensions);
  };
  for (const file of roots.flatMap(closure)) {
    if (index.byFilename.has(file.proto.name)) continue;
    index.byFilename.set(file.proto.name, file);
    for (const s of file.services) {
      sym(s.typeName, file);
      for (const m of s.methods) sym(`${s.typeName}.${m.name}`, file);
    }
    for (const m of file.messages) addMessage(file, m);
    for (const e of file.enums) addEnum(file, e);
    addExtensions(file, file.extensions);
  }
  return index;
}

function decodeRequest(bytes: Uint8Array): ReflectionRequest {
  try {
    const r = new BinaryReader(bytes);
    const req: ReflectionRequest = { host: "", request: { kind: "none" } };
    while (r.pos < r.len) {
      const [no, wt] = r.tag();
      // Every known field is a string or a message, i.e. length-delimited; anything else is skipped.
      if (wt !== WireType.LengthDelimited || no < 1 || no > 7 || no === 2) {
        r.skip(wt, no);
        continue;
      }
      switch (no) {
        case 1:
          req.host = r.string();
          break;
        case 3:
          req.request = { kind: "fileByFilename", value: r.string() };
          break;
        case 4:
          req.request = { kind: "fileContainingSymbol", value: r.string() };
          break;
        case 5:
          req.request = { kind: "fileContainingExtension", ...decodeExtensionRequest(r.bytes()) };
          break;
        case 6:
          req.request = { kind: "allExtensionNumbersOfType", value: r.string() };
          break;
        case 7:
          req.request = { kind: "listServices", value: r.string() };
          break;
      }
    }
    return req;
  } catch (e) {
    throw malformedMessage("ServerReflectionRequest", e);
  }
}

function decodeExtensionRequest(bytes: Uint8Array): { containingType: string; extensionNumber: number } {
  const r = new BinaryReader(bytes);
  const out = { containingType: "", extensionNumber: 0 };
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    if (no === 1 && wt === WireType.LengthDelimited) out.containingType = r.string();
    else if (no === 2 && wt === WireType.Varint) out.extensionNumber = r.int32();
    else r.skip(wt, no);
  }
  return out;
}

/** Re-encodes the request for original_request; only the last oneof member survives, as protobuf says. */
function encodeRequest(req: ReflectionRequest): Uint8Array {
  const w = new BinaryWriter();
  if (req.host !== "") w.tag(1, WireType.LengthDelimited).string(req.host);
  const r = req.request;
  switch (r.kind) {
    case "none":
      break;
    case "fileByFilename":
      w.tag(3, WireType.LengthDelimited).string(r.value);
      break;
    case "fileContainingSymbol":
      w.tag(4, WireType.LengthDelimited).string(r.value);
      break;
    case "fileContainingExtension": {
      const e = new BinaryWriter();
      if (r.containingType !== "") e.tag(1, WireType.LengthDelimited).string(r.containingType);
      if (r.extensionNumber !== 0) e.tag(2, WireType.Varint).int32(r.extensionNumber);
      w.tag(5, WireType.LengthDelimited).bytes(e.finish());
      break;
    }
    case "allExtensionNumbersOfType":
      w.tag(6, WireType.LengthDelimited).string(r.value);
      break;
    case "listServices":
      w.tag(7, WireType.LengthDelimited).string(r.value);
      break;
  }
  return w.finish();
}
