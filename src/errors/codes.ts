// The stable error codes of the whole project (like undici's UND_ERR_* or ConnectError's codes):
// callers branch on `code`, never on message text. What each code answers on every surface is
// the wire table's (wire.ts).

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
  /** The thing named (ticket, model, provider, route) does not exist. */
  NotFound: "KUBEMOOT_NOT_FOUND",
  /** A request lacks the credentials its port asks for (the web view's bearer token). */
  Unauthenticated: "KUBEMOOT_UNAUTHENTICATED",
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
  /** What a call needs (its body, its prompt's context, its model's memory) exceeds any limit or GPU; waiting cannot help. */
  TooLarge: "KUBEMOOT_TOO_LARGE",
  /** Whatever could serve the call is busy; coming back later may help (Retry-After). */
  Busy: "KUBEMOOT_BUSY",
  /** The caller went away or gave up; no one is left to answer. */
  Canceled: "KUBEMOOT_CANCELED",
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
