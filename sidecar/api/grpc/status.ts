// gRPC status codes and the two header formats the protocol defines: the percent-encoded
// `grpc-message` and the `grpc-timeout` duration (PROTOCOL-HTTP2 in grpc/grpc).

/** The gRPC status codes this server answers with (numerically the protocol's). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

/** A call's outcome other than OK: what a handler throws to answer with a status. */
export class GrpcStatusError extends Error {
  override readonly name = "GrpcStatusError";
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** INVALID_ARGUMENT for a message that does not decode as `typeName`. */
export function malformedMessage(typeName: string, err: unknown): GrpcStatusError {
  return new GrpcStatusError(
    GrpcCode.INVALID_ARGUMENT,
    `malformed ${typeName}: ${err instanceof Error ? err.message : String(err)}`,
  );
}

/**
 * `grpc-message` is percent-encoded UTF-8: bytes outside printable ASCII, and '%' itself, are
 * escaped so that any message survives an HTTP/2 header.
 */
export function encodeGrpcMessage(message: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(message)) return message;
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/**
 * Parses `grpc-timeout` (1–8 digits and a unit, H/M/S/m/u/n) into milliseconds; undefined when
 * absent. A malformed value is an error of the caller's, not a deadline of zero.
 */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!m) throw new GrpcStatusError(GrpcCode.INVALID_ARGUMENT, `grpc-timeout: malformed value "${value}"`);
  return Number(m[1]) * TIMEOUT_UNIT_MS[m[2]!]!;
}
