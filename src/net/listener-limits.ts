// Limits every listening port applies, so that stalled, idle or piled-up connections cannot
// hold a process's sockets and memory: a cap on concurrent connections, a deadline for a
// connection's first request head, one for the whole request, an idle timeout between requests
// (HTTP/1.1 keep-alive) or streams (HTTP/2 sessions), and a cap on concurrent HTTP/2 streams.
// Node's own server options carry them wherever they exist.
import type http from "node:http";
import { invalidArgument } from "../errors/index.js";
import { SETTINGS } from "../settings/index.js";

export interface ListenerLimits {
  /** Concurrent connections per listener; connections beyond it are closed at once. */
  maxConnections: number;
  /** From accepting a connection to the end of its request head (ms). */
  headersTimeoutMs: number;
  /** From the start of a request to the end of its body (ms); never cuts an answer. */
  requestTimeoutMs: number;
  /** A connection with no request (HTTP/1.1) or stream (HTTP/2) in flight is closed after this (ms). */
  idleTimeoutMs: number;
  /** Concurrent streams per HTTP/2 session (SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxStreams: number;
}

/** The defaults of the settings that set these (KUBEMOOT_MAX_CONNECTIONS, …). */
export const DEFAULT_LISTENER_LIMITS: Readonly<ListenerLimits> = {
  maxConnections: SETTINGS.maxConnections.default,
  headersTimeoutMs: SETTINGS.headersTimeoutMs.default,
  requestTimeoutMs: SETTINGS.requestTimeoutMs.default,
  idleTimeoutMs: SETTINGS.idleTimeoutMs.default,
  maxStreams: SETTINGS.maxStreams.default,
};

/** `given` over the defaults, validated (InvalidArgument naming the field). */
export function resolveListenerLimits(given: Partial<ListenerLimits> = {}): ListenerLimits {
  const l: ListenerLimits = { ...DEFAULT_LISTENER_LIMITS };
  for (const [k, v] of Object.entries(given) as [keyof ListenerLimits, number | undefined][]) {
    if (v === undefined) continue;
    if (!(k in DEFAULT_LISTENER_LIMITS)) throw invalidArgument(`limits.${k}`, "unknown limit");
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
      throw invalidArgument(`limits.${k}`, `expected a whole number ≥ 1, got ${String(v)}`);
    }
    l[k] = v;
  }
  // Node refuses a header deadline past the request's.
  if (l.headersTimeoutMs > l.requestTimeoutMs) {
    throw invalidArgument("limits.headersTimeoutMs", "must not exceed requestTimeoutMs");
  }
  return l;
}

/**
 * The http.Server options for these limits (the connection cap is `server.maxConnections`, set
 * by the caller on the listening server). Node checks the header and request deadlines on an
 * interval: a fraction of the header deadline, so a stalled connection goes within about 1.25×.
 */
export function http1LimitOptions(l: ListenerLimits): http.ServerOptions {
  return {
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    keepAliveTimeout: l.idleTimeoutMs,
    connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(l.headersTimeoutMs / 4))),
  };
}
