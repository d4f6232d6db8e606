// The engine's errors on the wire, in llama.cpp server's own shape (docs/rules/engines.md "A
// real llama.cpp engine", src/engines/README.md): {"error": {"code", "message", "type"}} with the
// HTTP status equal to `code`. Handlers throw KubemootError; this one table turns each code into
// llama.cpp's error type. An answer llama.cpp gives that no code describes (its 500 for `tools`
// without --jinja) is thrown as an EngineReply, already in its final shape.
import { ErrorCode, KubemootError } from "../errors/index.js";

/** llama.cpp's error types and the statuses it answers them with. */
const LLAMA_TYPE: Readonly<Record<ErrorCode, { status: number; type: string }>> = {
  [ErrorCode.InvalidArgument]: { status: 400, type: "invalid_request_error" },
  [ErrorCode.InvalidConfig]: { status: 500, type: "server_error" },
  [ErrorCode.InvalidManifest]: { status: 500, type: "server_error" },
  [ErrorCode.StateUnavailable]: { status: 503, type: "unavailable_error" },
  [ErrorCode.StateConflict]: { status: 500, type: "server_error" },
  [ErrorCode.StateExists]: { status: 500, type: "server_error" },
  [ErrorCode.NotFound]: { status: 404, type: "not_found_error" },
  [ErrorCode.Unauthenticated]: { status: 401, type: "authentication_error" },
  [ErrorCode.PermissionDenied]: { status: 403, type: "permission_error" },
  [ErrorCode.ProviderFailure]: { status: 500, type: "server_error" },
  [ErrorCode.SourceUnavailable]: { status: 500, type: "server_error" },
  [ErrorCode.Timeout]: { status: 500, type: "server_error" },
  [ErrorCode.ShuttingDown]: { status: 503, type: "unavailable_error" },
  [ErrorCode.Internal]: { status: 500, type: "server_error" },
  // A prompt over the slot's context is refused as exceed_context_size_error (below); a body
  // over the limit is the caller's request.
  [ErrorCode.TooLarge]: { status: 400, type: "invalid_request_error" },
  [ErrorCode.Busy]: { status: 503, type: "unavailable_error" },
  [ErrorCode.Canceled]: { status: 400, type: "invalid_request_error" },
};

/** An answer already in llama.cpp's shape (status and body), thrown by a handler. */
export class EngineReply extends Error {
  override readonly name = "EngineReply";
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`engine reply ${status}`);
  }
}

/** llama.cpp's error body for `status` and `type`, with extra fields inside `error`. */
export function llamaError(
  status: number,
  type: string,
  message: string,
  extra: Record<string, unknown> = {},
): { error: Record<string, unknown> } {
  return { error: { code: status, message, type, ...extra } };
}

/** The prompt does not fit the slot: llama.cpp's exceed_context_size_error (400). */
export function exceedContext(promptTokens: number, nCtx: number): EngineReply {
  const message = `request (${promptTokens} tokens) exceeds the available context size (${nCtx} tokens), try increasing it`;
  return new EngineReply(
    400,
    llamaError(400, "exceed_context_size_error", message, { n_prompt_tokens: promptTokens, n_ctx: nCtx }),
  );
}

/** What llama.cpp answers for `tools` (or a tool_choice) when it runs without --jinja: a 500. */
export function withoutJinja(message: string): EngineReply {
  return new EngineReply(500, llamaError(500, "server_error", message));
}

/** The status and body that answer `err`. */
export function errorAnswer(err: unknown): { status: number; body: unknown } {
  if (err instanceof EngineReply) return { status: err.status, body: err.body };
  const e = KubemootError.from(err);
  const row = LLAMA_TYPE[e.code];
  return { status: row.status, body: llamaError(row.status, row.type, e.message) };
}
