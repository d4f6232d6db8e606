// Typed failures of inference-server calls. Callers branch on `kind` (and the KubemootError
// `code`), never on message text.
import { ErrorCode, KubemootError } from "../errors/index.js";
import { redactSecrets } from "../log/index.js";

export type EngineErrorKind =
  /** Nothing listens there (ECONNREFUSED) or the host is unknown. */
  | "refused"
  /** Connecting, the headers or the body took longer than allowed. */
  | "timeout"
  /** The connection broke (reset, closed mid-answer). */
  | "network"
  /** The server answered with an error status. */
  | "http"
  /** The answer is not what the API documents (not JSON, wrong shape). */
  | "protocol"
  /** Another engine than the one declared answers there (EngineMismatchError). */
  | "mismatch";

export class EngineError extends KubemootError {
  readonly kind: EngineErrorKind;
  /** HTTP status for kind "http". */
  readonly status: number | undefined;
  /** Base URL of the server. */
  readonly endpoint: string;
  /** What was being done, e.g. "GET /api/ps". */
  readonly operation: string;

  constructor(
    kind: EngineErrorKind,
    message: string,
    details: { endpoint: string; operation: string; status?: number; cause?: unknown },
  ) {
    const code =
      kind === "timeout"
        ? ErrorCode.Timeout
        : details.status === 404
          ? ErrorCode.NotFound
          : ErrorCode.ProviderFailure;
    // Messages are printed and logged: an endpoint's user:password@ never is.
    super(code, redactSecrets(`${details.operation} ${details.endpoint}: ${message}`), {
      cause: details.cause,
    });
    this.kind = kind;
    this.status = details.status;
    this.endpoint = details.endpoint;
    this.operation = details.operation;
  }
}

export function isEngineError(err: unknown, kind?: EngineErrorKind): err is EngineError {
  return err instanceof EngineError && (kind === undefined || err.kind === kind);
}
