// A unary request whose bytes do not decode as its message gets INVALID_ARGUMENT on every
// protocol. connect-es decodes a unary request before any interceptor runs and answers INTERNAL
// "parse binary: …" (interceptors/errors.ts says why), so for unary methods the status is
// corrected on connect's finished answer, re-encoded with connect's own helpers. Streaming
// methods decode inside the interceptor chain, where the error interceptor corrects it.
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  createAsyncIterable,
  encodeEnvelope,
  readAllBytes,
  type UniversalHandler,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorFromJsonBytes, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import { isRequestParseError, malformedRequest } from "./interceptors/index.js";

/** Wraps the router's unary handlers; call after every service is registered. */
export function answerMalformedRequestsAsInvalid(router: ConnectRouter): void {
  router.handlers.forEach((handler, i) => {
    if (handler.method.methodKind === "unary") router.handlers[i] = correcting(handler);
  });
}

/** connect's status INTERNAL "parse binary: …" in trailers (gRPC) is one string compare away. */
const INTERNAL = String(Code.Internal);

function correcting(handler: UniversalHandler): UniversalHandler {
  const method = handler.method;
  const wrapped = async (req: Parameters<UniversalHandler>[0]): Promise<UniversalServerResponse> => {
    const res = await handler(req);
    const contentType = req.header.get("content-type") ?? "";
    if (contentType.startsWith("application/grpc-web")) return grpcWeb(res, method);
    if (contentType.startsWith("application/grpc")) {
      // Trailers of a call that failed before any output are final once the handler answers.
      if (res.trailer?.get("grpc-status") === INTERNAL) {
        const err = findTrailerError(res.trailer);
        if (err && isRequestParseError(err)) setTrailerStatus(res.trailer, malformedRequest(method, err));
      }
      return res;
    }
    return res.status === 500 ? connectUnary(res, method) : res;
  };
  return Object.assign(wrapped, {
    service: handler.service,
    method: handler.method,
    requestPath: handler.requestPath,
    protocolNames: handler.protocolNames,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
  });
}

/** Connect unary: the error is the JSON body of an HTTP error status. */
async function connectUnary(
  res: UniversalServerResponse,
  method: DescMethod,
): Promise<UniversalServerResponse> {
  if (res.body === undefined || res.header?.has("content-encoding")) return res;
  const body = await readAllBytes(res.body, Number.MAX_SAFE_INTEGER);
  const err = errorFromJsonBytes(body, undefined, new ConnectError("", Code.Internal));
  if (!isRequestParseError(err)) return { ...res, body: createAsyncIterable([body]) };
  const fixed = errorToJsonBytes(malformedRequest(method, err), undefined);
  res.header?.set("content-length", String(fixed.byteLength));
  return { ...res, status: codeToHttpStatus(Code.InvalidArgument), body: createAsyncIterable([fixed]) };
}

/** gRPC-Web: the status travels in a trailer envelope, here the body's first and only one. */
function grpcWeb(res: UniversalServerResponse, method: DescMethod): UniversalServerResponse {
  const body = res.body;
  if (body === undefined) return res;
  async function* corrected(): AsyncGenerator<Uint8Array> {
    const it = body![Symbol.asyncIterator]();
    try {
      const first = await it.next();
      if (first.done) return;
      let chunk = first.value;
      if (chunk.byteLength >= 5 && (chunk[0]! & trailerFlag) === trailerFlag) {
        const trailer = trailerParse(chunk.subarray(5));
        const err = findTrailerError(trailer);
        if (err && isRequestParseError(err)) {
          const status = setTrailerStatus(trailer, malformedRequest(method, err));
          chunk = encodeEnvelope(trailerFlag, trailerSerialize(status));
        }
      }
      yield chunk;
      for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
    } finally {
      // The client may stop reading early: let connect's iterator clean up.
      await it.return?.();
    }
  }
  return { ...res, body: corrected() };
}
