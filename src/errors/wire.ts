// The one wire table: what every error code, and every reason that refines one, answers on each
// surface (docs/design.md §4, sidecar/proxy/README.md "Errors"). The RPC error interceptor
// (sidecar/api/interceptors) sends `rpc`; the proxy sends the HTTP answers below. A code's first
// reason is the one its errors have when none is given.
//
//   Ollama routes:  status `http`, {"error": message, "reason", "field"?, ...detail}
//   OpenAI routes:  status `openai.status ?? http`,
//                   {"error": {"message", "type", "param": field | null, "code", "reason", ...}}
//   both:           X-Kubemoot-Reason: reason, and Retry-After when the error gives one
//
// RPC codes are named as @connectrpc/connect's `Code` keys, so that this folder imports no RPC
// library; the interceptor turns a name into connect's code with one lookup.
import { ErrorCode } from "./codes.js";

export type RpcCode =
  | "Canceled"
  | "InvalidArgument"
  | "DeadlineExceeded"
  | "NotFound"
  | "PermissionDenied"
  | "Unauthenticated"
  | "Unimplemented"
  | "ResourceExhausted"
  | "Internal"
  | "Unavailable";

/** OpenAI's error classes, which its SDKs raise as typed errors. */
export type OpenAiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "server_error";

export interface WireRow {
  /** The code over gRPC, Connect and gRPC-Web. */
  readonly rpc: RpcCode;
  /** The proxy's HTTP status (on OpenAI routes too, unless `openai.status` says otherwise). */
  readonly http: number;
  /**
   * Why `http` is not the status the Connect protocol gives `rpc`; absent where the two agree
   * (test/errors/wire-surfaces.test.ts holds both surfaces to that).
   */
  readonly httpBecause?: string;
  /** On OpenAI routes: `error.type`, `error.code`, and the status where OpenAI's differs. */
  readonly openai: { readonly type: OpenAiErrorType; readonly code: string; readonly status?: number };
}

const INVALID = "invalid_request_error";
const SERVER = "server_error";

export const WIRE = {
  [ErrorCode.InvalidArgument]: {
    "bad-request": { rpc: "InvalidArgument", http: 400, openai: { type: INVALID, code: "bad_request" } },
  },
  [ErrorCode.InvalidConfig]: {
    "invalid-config": { rpc: "Internal", http: 500, openai: { type: SERVER, code: "invalid_config" } },
  },
  [ErrorCode.InvalidManifest]: {
    "invalid-manifest": { rpc: "Internal", http: 500, openai: { type: SERVER, code: "invalid_manifest" } },
  },
  [ErrorCode.StateUnavailable]: {
    "state-unavailable": {
      rpc: "Unavailable",
      http: 503,
      openai: { type: SERVER, code: "state_unavailable" },
    },
  },
  [ErrorCode.StateConflict]: {
    "state-conflict": { rpc: "Internal", http: 500, openai: { type: SERVER, code: "state_conflict" } },
  },
  [ErrorCode.StateExists]: {
    "state-exists": { rpc: "Internal", http: 500, openai: { type: SERVER, code: "state_exists" } },
  },
  [ErrorCode.NotFound]: {
    "not-found": { rpc: "NotFound", http: 404, openai: { type: INVALID, code: "not_found" } },
    "model-not-found": { rpc: "NotFound", http: 404, openai: { type: INVALID, code: "model_not_found" } },
    /** The placed provider's engine does not serve the route (its router's own 404 or 405). */
    "route-not-served": { rpc: "NotFound", http: 404, openai: { type: INVALID, code: "route_not_served" } },
    /** A route that exists, asked with a method it does not take (the web view is read-only). */
    "method-not-allowed": {
      rpc: "Unimplemented",
      http: 405,
      httpBecause: "the route exists but not for this method: HTTP's Method Not Allowed",
      openai: { type: INVALID, code: "method_not_allowed" },
    },
  },
  [ErrorCode.Unauthenticated]: {
    unauthenticated: {
      rpc: "Unauthenticated",
      http: 401,
      openai: { type: "authentication_error", code: "unauthenticated" },
    },
  },
  [ErrorCode.PermissionDenied]: {
    forbidden: {
      rpc: "PermissionDenied",
      http: 403,
      openai: { type: "permission_error", code: "forbidden" },
    },
    "managed-by-operator": {
      rpc: "PermissionDenied",
      http: 403,
      openai: { type: "permission_error", code: "managed_by_operator" },
    },
  },
  [ErrorCode.ProviderFailure]: {
    "provider-failure": {
      rpc: "Internal",
      http: 502,
      httpBecause: "the proxy is a gateway: a provider that failed it is HTTP's Bad Gateway",
      openai: { type: SERVER, code: "provider_failure" },
    },
    /** No GPU that could serve is reachable and healthy (down, not ready, breaker open). */
    "provider-unavailable": {
      rpc: "Unavailable",
      http: 503,
      openai: { type: SERVER, code: "provider_unavailable" },
    },
  },
  [ErrorCode.SourceUnavailable]: {
    "source-unavailable": {
      rpc: "Internal",
      http: 500,
      openai: { type: SERVER, code: "source_unavailable" },
    },
  },
  [ErrorCode.Timeout]: {
    timeout: { rpc: "DeadlineExceeded", http: 504, openai: { type: SERVER, code: "timeout" } },
    /** The client did not send its request within the listener's deadline. */
    "request-timeout": {
      rpc: "DeadlineExceeded",
      http: 408,
      httpBecause: "the client was too slow, not a provider: HTTP's Request Timeout",
      openai: { type: INVALID, code: "request_timeout" },
    },
  },
  [ErrorCode.ShuttingDown]: {
    "shutting-down": { rpc: "Unavailable", http: 503, openai: { type: SERVER, code: "shutting_down" } },
  },
  [ErrorCode.Internal]: {
    internal: { rpc: "Internal", http: 500, openai: { type: SERVER, code: "internal" } },
  },
  [ErrorCode.TooLarge]: {
    "body-too-large": {
      rpc: "ResourceExhausted",
      http: 413,
      httpBecause: "HTTP has a status for a body over the limit: Content Too Large",
      openai: { type: INVALID, code: "request_too_large" },
    },
    /** No context holds the prompt (or an embedding input, or the num_ctx policy refused). */
    "prompt-too-large": {
      rpc: "ResourceExhausted",
      http: 413,
      httpBecause: "the prompt is the request's content: Content Too Large (OpenAI answers 400)",
      // As OpenAI answers it: the SDKs type a 400 with this code, and do not type 413.
      openai: { type: INVALID, code: "context_length_exceeded", status: 400 },
    },
    /** No GPU can hold the model. */
    "model-too-large": {
      rpc: "ResourceExhausted",
      http: 507,
      httpBecause: "no GPU has the memory: Insufficient Storage, a server-side limit",
      openai: { type: SERVER, code: "model_too_large" },
    },
  },
  [ErrorCode.Busy]: {
    /** Every GPU that could serve is busy at the wait limit. */
    "gpu-busy": { rpc: "Unavailable", http: 503, openai: { type: SERVER, code: "gpu_busy" } },
    /** The provider's own queue is full (it answered 429 or 503). */
    "provider-busy": { rpc: "Unavailable", http: 503, openai: { type: SERVER, code: "provider_busy" } },
  },
  [ErrorCode.Canceled]: {
    canceled: { rpc: "Canceled", http: 499, openai: { type: INVALID, code: "canceled" } },
  },
} as const satisfies { readonly [C in ErrorCode]: { readonly [reason: string]: WireRow } };

type Reasons = { readonly [C in ErrorCode]: keyof (typeof WIRE)[C] & string };

/** The reasons that refine code `C` (every reason, for the union of all codes). */
export type ReasonOf<C extends ErrorCode> = Reasons[C];

export type ErrorReason = ReasonOf<ErrorCode>;

/**
 * Fields an HTTP error answer adds to its JSON, named as sent; each only where it applies.
 * Over RPC they are not sent: the message says what they say.
 */
export interface ErrorDetail {
  /** The model the call asked for, or was placed on. */
  model?: string;
  /** The largest context a placement offers (tokens). */
  largest_context?: number;
  /** The prompt as judged (tokens): the engine's own count, else the generous estimate. */
  prompt_tokens?: number;
  /** How long the call waited for a GPU before it was refused (milliseconds). */
  waited_ms?: number;
  /** The provider that failed, refused or is busy. */
  provider?: string;
  /** The HTTP status the provider answered. */
  upstream_status?: number;
  /** The proxy's request body limit (bytes). */
  limit_bytes?: number;
  /** Where the rule that refused the call is documented (a path under docs/). */
  doc?: string;
}

/** What the wire needs of an error: KubemootError has it all. */
export interface WireError {
  readonly code: ErrorCode;
  readonly reason: string;
  readonly message: string;
  readonly field?: string | undefined;
  readonly detail?: ErrorDetail | undefined;
  readonly retryAfterS?: number | undefined;
}

const BY_CODE: Readonly<Record<string, Readonly<Record<string, WireRow>>>> = WIRE;

/** The reason a code's errors have when none is given: its first. */
export function defaultReason<C extends ErrorCode>(code: C): ReasonOf<C> {
  return Object.keys(WIRE[code])[0] as ReasonOf<C>;
}

/** The row of an error's code and reason; an unknown reason is its code's, an unknown code internal. */
export function wireRow(e: Pick<WireError, "code" | "reason">): WireRow {
  const rows = BY_CODE[e.code] ?? BY_CODE[ErrorCode.Internal]!;
  return rows[e.reason] ?? (Object.values(rows)[0] as WireRow);
}

/** The reason an error goes out with: its own when its code has it, else its code's first. */
export function wireReason(e: Pick<WireError, "code" | "reason">): string {
  const rows = BY_CODE[e.code];
  if (rows === undefined) return defaultReason(ErrorCode.Internal);
  return e.reason in rows ? e.reason : (Object.keys(rows)[0] as string);
}

export type ErrorShape = "ollama" | "openai";

export interface HttpAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** An error's HTTP answer in the route's shape (the table's header says both). */
export function httpAnswer(e: WireError, shape: ErrorShape): HttpAnswer {
  const row = wireRow(e);
  const reason = wireReason(e);
  const headers: Record<string, string> = { "x-kubemoot-reason": reason };
  if (e.retryAfterS !== undefined) headers["retry-after"] = String(e.retryAfterS);
  const field = e.field === undefined ? {} : { field: e.field };
  if (shape === "ollama") {
    return { status: row.http, body: { error: e.message, reason, ...field, ...e.detail }, headers };
  }
  const error = {
    message: e.message,
    type: row.openai.type,
    param: e.field ?? null,
    code: row.openai.code,
    reason,
    ...field,
    ...e.detail,
  };
  return { status: row.openai.status ?? row.http, body: { error }, headers };
}
