// A SERVER span per API call (docs/tracing.md "Our RPCs"): named `<service>/<method>`, with the
// RPC semantic conventions' attributes, continuing the caller's W3C context from its headers
// (gRPC metadata is headers), and the handler run inside it, so that a Place's or a Wait's
// placement span is its child. A stream's span ends with the stream.

import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { type Context, context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { ATTR, contextFromFetchHeaders, tracer } from "../../../src/tracing/index.js";

export function tracingInterceptor(): Interceptor {
  return (next) => async (req) => {
    const parent = contextFromFetchHeaders(req.header);
    const service = req.method.parent.typeName;
    const type = req.header.get("content-type") ?? "";
    const grpc = type.startsWith("application/grpc");
    const span = tracer().startSpan(
      `${service}/${req.method.name}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR.rpcSystem]: grpc ? "grpc" : "connect_rpc",
          [ATTR.rpcService]: service,
          [ATTR.rpcMethod]: req.method.name,
        },
      },
      parent,
    );
    const ctx = trace.setSpan(parent, span);
    const end = (err: ConnectError | undefined) => {
      if (span.isRecording()) {
        if (grpc) span.setAttribute(ATTR.rpcGrpcStatus, err?.code ?? 0);
        if (err !== undefined) {
          if (!grpc) span.setAttribute(ATTR.rpcConnectError, codeToString(err.code));
          span.setAttribute(ATTR.errorType, codeToString(err.code));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      span.end();
    };
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await context.with(ctx, () => next(req));
    } catch (err) {
      end(ConnectError.from(err));
      throw err;
    }
    if (!res.stream) {
      end(undefined);
      return res;
    }
    return { ...res, message: inContext(res.message, ctx, end, req.signal) };
  };
}

/** A server stream's messages, each produced inside the call's context; the span ends with it. */
async function* inContext<T>(
  messages: AsyncIterable<T>,
  ctx: Context,
  end: (err: ConnectError | undefined) => void,
  signal: AbortSignal,
): AsyncIterable<T> {
  const it = messages[Symbol.asyncIterator]();
  let ended = false;
  try {
    for (;;) {
      const r = await context.with(ctx, () => it.next());
      if (r.done) break;
      yield r.value;
    }
  } catch (err) {
    ended = true;
    end(ConnectError.from(err));
    throw err;
  } finally {
    await it.return?.();
    if (!ended) end(signal.aborted ? ConnectError.from(signal.reason) : undefined);
  }
}
