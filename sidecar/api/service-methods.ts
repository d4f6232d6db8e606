// Serves a connect-es `ServiceImpl` on the lean gRPC server (./grpc): the handlers are written
// once against connect-es types (transport-agnostic, like connect-es's own core) and served
// here for gRPC over HTTP/2 and by connect-node for Connect JSON and gRPC-Web on HTTP/1.1.
import {
  create,
  type DescMessage,
  type DescMethod,
  type DescService,
  fromBinary,
  toBinary,
} from "@bufbuild/protobuf";
import {
  ConnectError,
  type ContextValues,
  createContextValues,
  type HandlerContext,
} from "@connectrpc/connect";
import { type GrpcCall, type GrpcMethod, GrpcStatusError, malformedMessage } from "./grpc/index.js";

// biome-ignore lint/suspicious/noExplicitAny: method implementations are typed by the caller's ServiceImpl.
type AnyImpl = Record<string, (...args: any[]) => any>;

/** Methods of `service` implemented by `impl`, by path, for `grpcStreamHandler`. */
export function serviceMethods(service: DescService, impl: AnyImpl): Map<string, GrpcMethod> {
  const methods = new Map<string, GrpcMethod>();
  for (const method of service.methods) {
    const fn = impl[method.localName];
    if (!fn) continue;
    const path = `/${service.typeName}/${method.name}`;
    if (method.methodKind === "unary") {
      methods.set(path, {
        kind: "unary",
        handle: async (bytes, call) => {
          const req = decode(method.input, bytes);
          try {
            const res = await fn.call(impl, req, new CallContext(service, method, call));
            return toBinary(method.output, create(method.output, res));
          } catch (err) {
            throw toStatus(err);
          }
        },
      });
    } else if (method.methodKind === "server_streaming") {
      methods.set(path, {
        kind: "server_streaming",
        handle: async (bytes, call, send) => {
          const req = decode(method.input, bytes);
          try {
            for await (const res of fn.call(
              impl,
              req,
              new CallContext(service, method, call),
            ) as AsyncIterable<unknown>) {
              await send(toBinary(method.output, create(method.output, res as never)));
            }
          } catch (err) {
            throw toStatus(err);
          }
        },
      });
    } else {
      throw new Error(`grpc: ${method.name}: only unary and server-streaming methods are supported`);
    }
  }
  return methods;
}

function decode(schema: DescMessage, bytes: Uint8Array): unknown {
  try {
    return fromBinary(schema, bytes);
  } catch (err) {
    throw malformedMessage(schema.typeName, err);
  }
}

/** ConnectError → its gRPC status (connect's codes are numerically gRPC's); anything else passes on as a bug. */
function toStatus(err: unknown): unknown {
  if (err instanceof GrpcStatusError) return err;
  if (err instanceof ConnectError) return new GrpcStatusError(err.code, err.rawMessage);
  return err;
}

/**
 * connect-es's HandlerContext over a gRPC call, built lazily: most calls read only `signal`
 * (createHandlerContext's linked controllers and header copies were measurable per call).
 */
class CallContext implements HandlerContext {
  readonly protocolName = "grpc";
  readonly requestMethod = "POST";
  private headersCopy: Headers | undefined;
  private valuesCopy: ContextValues | undefined;
  private responseHeaders: Headers | undefined;
  private responseTrailers: Headers | undefined;

  constructor(
    readonly service: DescService,
    readonly method: DescMethod,
    private readonly call: GrpcCall,
  ) {}

  get signal(): AbortSignal {
    return this.call.signal;
  }
  get url(): string {
    return this.call.path;
  }
  readonly timeoutMs = (): number | undefined => this.call.timeoutMs();
  get requestHeader(): Headers {
    if (this.headersCopy === undefined) {
      const h = new Headers();
      for (const [k, v] of Object.entries(this.call.headers)) {
        if (k.startsWith(":") || v === undefined) continue;
        if (Array.isArray(v)) for (const one of v) h.append(k, one);
        else h.set(k, String(v));
      }
      this.headersCopy = h;
    }
    return this.headersCopy;
  }
  // Response metadata is not sent by this server; the objects exist for handlers that set it.
  get responseHeader(): Headers {
    this.responseHeaders ??= new Headers();
    return this.responseHeaders;
  }
  get responseTrailer(): Headers {
    this.responseTrailers ??= new Headers();
    return this.responseTrailers;
  }
  get values(): ContextValues {
    this.valuesCopy ??= createContextValues();
    return this.valuesCopy;
  }
}
