// The API's one error path: whatever a handler throws becomes a ConnectError here, and
// connect-node writes it in each protocol's own form (gRPC status, Connect JSON, gRPC-Web
// trailer). Handlers throw our error family; its RPC codes are the wire table's
// (src/errors/wire.ts), named there as connect's `Code` keys.
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { KubemootError, wireRow } from "../../../src/errors/index.js";

/** A KubemootError by the wire table's row for its code and reason; anything else is a bug: INTERNAL. */
export function toConnectError(err: unknown, method?: DescMethod): ConnectError {
  if (err instanceof ConnectError) {
    return method !== undefined && isRequestParseError(err) ? malformedRequest(method, err) : err;
  }
  if (KubemootError.is(err)) {
    return new ConnectError(err.message, Code[wireRow(err).rpc], undefined, undefined, err);
  }
  return new ConnectError(
    err instanceof Error ? err.message : String(err),
    Code.Internal,
    undefined,
    undefined,
    err,
  );
}

// connect-es decodes requests and responses with one helper, which reports bytes that are not
// the expected message as INTERNAL "parse binary: …" (right for a client reading a response).
// For a request the fault is the caller's: INVALID_ARGUMENT, naming the message type.
const PARSE_BINARY = "parse binary: ";

/** True for connect's error about request bytes that do not decode as the method's input. */
export function isRequestParseError(err: ConnectError): boolean {
  return err.code === Code.Internal && err.rawMessage.startsWith(PARSE_BINARY);
}

/** INVALID_ARGUMENT for a request that does not decode as `method`'s input. */
export function malformedRequest(method: DescMethod, parseError: ConnectError): ConnectError {
  const why = parseError.rawMessage.slice(PARSE_BINARY.length);
  return new ConnectError(
    `malformed ${method.input.typeName}: ${why}`,
    Code.InvalidArgument,
    undefined,
    undefined,
    parseError,
  );
}

/**
 * Maps every error a handler throws (streams included) with toConnectError. Innermost, so that
 * the other interceptors see the code the client gets.
 */
export const errorInterceptor: Interceptor = (next) => async (req) => {
  let res: Awaited<ReturnType<typeof next>>;
  try {
    res = await next(req);
  } catch (err) {
    throw toConnectError(err, req.method);
  }
  if (!res.stream) return res;
  return { ...res, message: mapStreamErrors(res.message, req.method) };
};

async function* mapStreamErrors<T>(messages: AsyncIterable<T>, method: DescMethod): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw toConnectError(err, method);
  }
}
