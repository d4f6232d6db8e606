// One error family for the whole project: a stable `code` (codes.ts), refined by a `reason` where
// a surface answers it more exactly, and what its answer carries. How each goes out over RPC and
// HTTP is the wire table's (wire.ts).
import { ErrorCode } from "./codes.js";
import { defaultReason, type ErrorDetail, type ReasonOf } from "./wire.js";

export interface KubemootErrorOptions<C extends ErrorCode = ErrorCode> {
  /** The field (or file and field) a validation error is about; HTTP answers name it (`field`, OpenAI `param`). */
  field?: string;
  /** What refines the code on the wire; default the code's first reason in the wire table. */
  reason?: ReasonOf<C>;
  /** JSON fields the HTTP answer adds (wire.ts ErrorDetail: names as sent, units documented). */
  detail?: ErrorDetail;
  /** Seconds after which trying again may succeed: the HTTP answer's Retry-After. */
  retryAfterS?: number;
  cause?: unknown;
}

export class KubemootError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = "KubemootError";
  readonly code: C;
  readonly reason: ReasonOf<C>;
  readonly field: string | undefined;
  readonly detail: ErrorDetail | undefined;
  readonly retryAfterS: number | undefined;

  constructor(code: C, message: string, options: KubemootErrorOptions<C> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.reason = options.reason ?? defaultReason(code);
    this.field = options.field;
    this.detail = options.detail;
    this.retryAfterS = options.retryAfterS;
  }

  /** True for any KubemootError, optionally of one code; works across module copies. */
  static is(err: unknown, code?: ErrorCode): err is KubemootError {
    if (typeof err !== "object" || err === null) return false;
    const e = err as { name?: unknown; code?: unknown };
    return e.name === "KubemootError" && (code === undefined || e.code === code);
  }

  /** `err` itself when it is one; anything else is a bug: Internal, with `err` as its cause. */
  static from(err: unknown): KubemootError {
    if (KubemootError.is(err)) return err;
    const message = err instanceof Error ? err.message : String(err);
    return new KubemootError(ErrorCode.Internal, `internal error: ${message}`, { cause: err });
  }
}

/** Shorthand for the most common case: a bad value in a named field. */
export function invalidArgument(
  field: string,
  message: string,
): KubemootError<typeof ErrorCode.InvalidArgument> {
  return new KubemootError(ErrorCode.InvalidArgument, `${field}: ${message}`, { field });
}
