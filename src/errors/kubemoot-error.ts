// One error family for the whole project, with stable string codes (like undici's
// UND_ERR_* or ConnectError's codes): callers branch on `code`, never on message text.

export const ErrorCode = {
  /** A request or configuration value is malformed or out of range; `field` names it. */
  InvalidArgument: "KUBEMOOT_INVALID_ARGUMENT",
  /** Configuration at start is invalid; the process should exit with the message. */
  InvalidConfig: "KUBEMOOT_INVALID_CONFIG",
  /** A manifest (YAML/JSON document) is invalid; `field` names the file and field. */
  InvalidManifest: "KUBEMOOT_INVALID_MANIFEST",
  /** The shared-state backend (NATS) cannot be reached. */
  StateUnavailable: "KUBEMOOT_STATE_UNAVAILABLE",
  /** A compare-and-set lost: another writer advanced the key first. */
  StateConflict: "KUBEMOOT_STATE_CONFLICT",
  /** A key that must not exist already exists (create-if-absent). */
  StateExists: "KUBEMOOT_STATE_EXISTS",
  /** The thing named (ticket, model, provider) does not exist. */
  NotFound: "KUBEMOOT_NOT_FOUND",
  /** The caller may not act for what it named (another agent than the sidecar's own). */
  PermissionDenied: "KUBEMOOT_PERMISSION_DENIED",
  /** An inference provider failed or could not be reached. */
  ProviderFailure: "KUBEMOOT_PROVIDER_FAILURE",
  /** An external inventory source (a topology webhook) failed or could not be read. */
  SourceUnavailable: "KUBEMOOT_SOURCE_UNAVAILABLE",
  /** An operation ran out of time. */
  Timeout: "KUBEMOOT_TIMEOUT",
  /** The process is shutting down and takes no new work. */
  ShuttingDown: "KUBEMOOT_SHUTTING_DOWN",
  /** A bug: an invariant did not hold. */
  Internal: "KUBEMOOT_INTERNAL",
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface KubemootErrorOptions {
  /** The field (or file and field) a validation error is about. */
  field?: string;
  cause?: unknown;
}

export class KubemootError extends Error {
  override readonly name = "KubemootError";
  readonly code: ErrorCode;
  readonly field: string | undefined;

  constructor(code: ErrorCode, message: string, options: KubemootErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.field = options.field;
  }

  /** True for any KubemootError, optionally of one code; works across module copies. */
  static is(err: unknown, code?: ErrorCode): err is KubemootError {
    if (typeof err !== "object" || err === null) return false;
    const e = err as { name?: unknown; code?: unknown };
    return e.name === "KubemootError" && (code === undefined || e.code === code);
  }
}

/** Shorthand for the most common case: a bad value in a named field. */
export function invalidArgument(field: string, message: string): KubemootError {
  return new KubemootError(ErrorCode.InvalidArgument, `${field}: ${message}`, { field });
}
