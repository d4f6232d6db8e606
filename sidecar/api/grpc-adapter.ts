// Serves a connect-es `ServiceImpl` on a @grpc/grpc-js server. The handlers are written once
// against connect-es types (transport-agnostic, like connect-es's own core) and served by
// grpc-js for HTTP/2 gRPC — measured faster than connect-node's gRPC for grpc-js clients —
// and by connect-node for Connect JSON and gRPC-Web on HTTP/1.1.
import {
  create,
  type DescMessage,
  type DescMethod,
  type DescService,
  fromBinary,
  toBinary,
} from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";

/** A request whose bytes did not decode; answered with INVALID_ARGUMENT instead of INTERNAL. */
class Malformed {
  constructor(readonly error: unknown) {}
}

// biome-ignore lint/suspicious/noExplicitAny: method implementations are typed by the caller's ServiceImpl.
type AnyImpl = Record<string, (...args: any[]) => any>;

export interface GrpcAdapterOptions {
  /** Aborted when the server shuts down: handlers see it through `context.signal`. */
  shutdownSignal?: AbortSignal;
  /** Called with every error a handler threw that is not a ConnectError (a bug). */
  onInternalError?: (err: unknown, method: DescMethod) => void;
}

export function grpcService(
  service: DescService,
  impl: AnyImpl,
  options: GrpcAdapterOptions = {},
): { definition: grpc.ServiceDefinition; handlers: grpc.UntypedServiceImplementation } {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const fn = impl[method.localName];
    if (!fn) continue;
    const serverStreaming = method.methodKind === "server_streaming";
    if (method.methodKind !== "unary" && !serverStreaming) {
      throw new Error(`grpc adapter: ${method.name}: only unary and server-streaming methods are supported`);
    }
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      originalName: method.name,
      requestStream: false,
      responseStream: serverStreaming,
      requestSerialize: (m: unknown) => Buffer.from(toBinary(method.input, m as never)),
      requestDeserialize: (b: Buffer) => decode(method.input, b),
      responseSerialize: (m: unknown) => Buffer.from(toBinary(method.output, m as never)),
      responseDeserialize: (b: Buffer) => fromBinary(method.output, b),
    };
    handlers[method.localName] = serverStreaming
      ? serverStreamHandler(service, method, fn, options)
      : unaryHandler(service, method, fn, options);
  }
  return { definition: definition as grpc.ServiceDefinition, handlers };
}

function decode(schema: DescMessage, bytes: Buffer): unknown {
  try {
    return fromBinary(schema, bytes);
  } catch (err) {
    return new Malformed(err);
  }
}

/** The reason a finished call's context is aborted with: a constant, so finishing allocates nothing. */
const CALL_DONE = Object.freeze({ reason: "call finished" });

function contextFor(
  service: DescService,
  method: DescMethod,
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
  options: GrpcAdapterOptions,
  linkShutdown: boolean,
) {
  const requestSignal = new AbortController();
  call.on("cancelled", () => requestSignal.abort(new ConnectError("client cancelled", Code.Canceled)));
  const headers = new Headers();
  for (const [k, v] of Object.entries(call.metadata.getMap())) {
    if (typeof v === "string") headers.set(k, v);
  }
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  const timeoutMs = Number.isFinite(deadlineMs) ? Math.max(0, deadlineMs - Date.now()) : undefined;
  return createHandlerContext({
    service,
    method,
    protocolName: "grpc",
    requestMethod: "POST",
    url: `/${service.typeName}/${method.name}`,
    requestSignal: requestSignal.signal,
    requestHeader: headers,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    // Linking to the server's long-lived shutdown signal adds a listener that only abort()
    // removes; short unary calls skip it (the server drains them instead).
    ...(linkShutdown && options.shutdownSignal ? { shutdownSignal: options.shutdownSignal } : {}),
  });
}

function toServiceError(err: unknown, method: DescMethod, options: GrpcAdapterOptions): grpc.ServiceError {
  const ce = ConnectError.from(err);
  if (!(err instanceof ConnectError)) options.onInternalError?.(err, method);
  // Connect's codes are numerically gRPC's status codes.
  const e = new Error(ce.rawMessage) as grpc.ServiceError;
  e.code = ce.code as unknown as grpc.status;
  e.details = ce.rawMessage;
  e.metadata = new grpc.Metadata();
  return e;
}

function malformed(method: DescMethod, m: Malformed): grpc.ServiceError {
  const msg = `malformed ${method.input.typeName}: ${(m.error as Error)?.message ?? String(m.error)}`;
  const e = new Error(msg) as grpc.ServiceError;
  e.code = grpc.status.INVALID_ARGUMENT;
  e.details = msg;
  e.metadata = new grpc.Metadata();
  return e;
}

function unaryHandler(
  service: DescService,
  method: DescMethod,
  fn: AnyImpl[string],
  options: GrpcAdapterOptions,
): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    if (call.request instanceof Malformed) return callback(malformed(method, call.request));
    const ctx = contextFor(service, method, call, options, false);
    const hasDeadline = ctx.timeoutMs() !== undefined;
    Promise.resolve()
      .then(() => fn(call.request, ctx as HandlerContext))
      .then(
        (res) => callback(null, create(method.output, res)),
        (err) => callback(toServiceError(err, method, options)),
      )
      .finally(() => {
        // Only a deadline timer needs cleaning up; without one the context is simply garbage.
        if (hasDeadline) ctx.abort(CALL_DONE);
      });
  };
}

function serverStreamHandler(
  service: DescService,
  method: DescMethod,
  fn: AnyImpl[string],
  options: GrpcAdapterOptions,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    if (call.request instanceof Malformed) {
      call.emit("error", malformed(method, call.request));
      return;
    }
    const ctx = contextFor(service, method, call, options, true);
    (async () => {
      for await (const res of fn(call.request, ctx as HandlerContext) as AsyncIterable<unknown>) {
        if (call.cancelled) break;
        const ok = call.write(create(method.output, res as never));
        if (!ok) await new Promise((r) => call.once("drain", r));
      }
    })()
      .then(
        () => {
          if (!call.cancelled) call.end();
        },
        (err) => {
          if (!call.cancelled) call.emit("error", toServiceError(err, method, options));
        },
      )
      .finally(() => ctx.abort(CALL_DONE));
  };
}
