// The connection limits of the sidecar's listening ports (API, health, proxy) and the proxy's
// body limit, as flags with environment variables; shared by `sidecar` and `standalone`.
import { DEFAULT_MAX_BODY_BYTES } from "../../sidecar/proxy/index.js";
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits, resolveListenerLimits } from "../net/index.js";
import { type FlagSpec, type FlagValues, numberFlag } from "./command.js";

const LIMIT_FLAGS: Record<keyof ListenerLimits, [flag: string, env: string, description: string]> = {
  maxConnections: [
    "max-connections",
    "KUBEMOOT_MAX_CONNECTIONS",
    "concurrent connections per port; more are closed at once",
  ],
  headersTimeoutMs: [
    "headers-timeout-ms",
    "KUBEMOOT_HEADERS_TIMEOUT_MS",
    "a connection's deadline to send its first request head",
  ],
  requestTimeoutMs: [
    "request-timeout-ms",
    "KUBEMOOT_REQUEST_TIMEOUT_MS",
    "deadline to receive a whole request",
  ],
  idleTimeoutMs: [
    "idle-timeout-ms",
    "KUBEMOOT_IDLE_TIMEOUT_MS",
    "a connection with no request or stream in flight is closed after this",
  ],
  maxStreams: ["max-streams", "KUBEMOOT_MAX_STREAMS", "concurrent HTTP/2 streams per connection"],
};

export const LISTENER_FLAGS: Record<string, FlagSpec> = {
  ...Object.fromEntries(
    Object.entries(LIMIT_FLAGS).map(([key, [flag, env, description]]) => [
      flag,
      {
        type: "string",
        default: String(DEFAULT_LISTENER_LIMITS[key as keyof ListenerLimits]),
        env,
        description,
      } satisfies FlagSpec,
    ]),
  ),
  "proxy-max-body-bytes": {
    type: "string",
    default: String(DEFAULT_MAX_BODY_BYTES),
    env: "KUBEMOOT_PROXY_MAX_BODY_BYTES",
    description: "largest proxy request body; larger ones get 413",
  },
};

/** The limits the flags give (InvalidConfig naming the flag when one is not a number ≥ 1). */
export function listenerLimitsFromFlags(flags: FlagValues): ListenerLimits {
  const given: Partial<ListenerLimits> = {};
  for (const [key, [flag]] of Object.entries(LIMIT_FLAGS)) {
    given[key as keyof ListenerLimits] = Math.floor(numberFlag(flags, flag, 1));
  }
  return resolveListenerLimits(given);
}

export function proxyMaxBodyBytesFromFlags(flags: FlagValues): number {
  return Math.floor(numberFlag(flags, "proxy-max-body-bytes", 1));
}
