// A SERVER span per API call (docs/tracing.md "Our RPCs"): named `<service>/<method>`, with the
// RPC semantic conventions' attributes, continuing the caller's W3C context from its headers
// (gRPC metadata is headers), and the handler run inside it (observeCalls' scope), so that a
// Place's or a Wait's placement span is its child. A stream's span ends with the stream.

import type { ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { ATTR, contextFromFetchHeaders, tracer } from "../../../src/tracing/index.js";
import { observeCalls } from "./outcome.js";

export function tracingInterceptor() {
  return observeCalls((req) => {
    const parent = contextFromFetchHeaders(req.header);
    const service = req.method.parent.typeName;
    const grpc = (req.header.get("content-type") ?? "").startsWith("application/grpc");
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
    return { end, scope: (f) => context.with(ctx, f) };
  });
}
