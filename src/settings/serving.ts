// What the serving processes listen on and how much they take (docs/deploy.md "The sidecar's
// ports"): the health-only port, every port's connection limits, the proxy's body limit, and
// the log level. The defaults are the listeners' own (src/net and the proxy import them).
import { type CommandName, defineSetting, defineText, parseNumber, type Setting } from "./setting.js";

const SERVING: readonly CommandName[] = ["sidecar", "standalone"];

function limitSetting(
  name: string,
  flag: string,
  o: { default: number; unit?: "ms" | "bytes"; help: string },
): Setting<number> {
  return defineSetting({
    name,
    type: "number",
    ...(o.unit ? { unit: o.unit } : {}),
    default: o.default,
    help: o.help,
    readBy: SERVING,
    flag,
    parseValue: (raw, source) => Math.floor(parseNumber(raw, source, 1)),
  });
}

export const SERVING_SETTINGS = {
  healthListen: defineText({
    name: "KUBEMOOT_HEALTH_LISTEN",
    type: "address",
    help: "a health-only port (empty: none): gRPC health, /healthz and /readyz (the operator's: HTTP only), the sidecar's /metrics; nothing that changes state",
    readBy: ["sidecar", "standalone", "operator"],
    flag: "health-listen",
    placeholder: "HOST:PORT",
  }),
  maxConnections: limitSetting("KUBEMOOT_MAX_CONNECTIONS", "max-connections", {
    default: 256,
    help: "concurrent connections per port (API, health, proxy); more are closed at once",
  }),
  headersTimeoutMs: limitSetting("KUBEMOOT_HEADERS_TIMEOUT_MS", "headers-timeout-ms", {
    default: 10_000,
    unit: "ms",
    help: "a connection's deadline to send its first request head (or HTTP/2 preface)",
  }),
  requestTimeoutMs: limitSetting("KUBEMOOT_REQUEST_TIMEOUT_MS", "request-timeout-ms", {
    default: 60_000,
    unit: "ms",
    help: "deadline to receive a whole request (head and body); answers are never cut by it",
  }),
  idleTimeoutMs: limitSetting("KUBEMOOT_IDLE_TIMEOUT_MS", "idle-timeout-ms", {
    default: 65_000,
    unit: "ms",
    help: "a connection with no request or stream in flight is closed after this",
  }),
  maxStreams: limitSetting("KUBEMOOT_MAX_STREAMS", "max-streams", {
    default: 256,
    help: "concurrent HTTP/2 streams per connection",
  }),
  proxyMaxBodyBytes: limitSetting("KUBEMOOT_PROXY_MAX_BODY_BYTES", "proxy-max-body-bytes", {
    default: 8 * 1024 * 1024,
    unit: "bytes",
    help: "the largest proxy request body; a larger one gets 413",
  }),
  logLevel: defineText({
    name: "KUBEMOOT_LOG_LEVEL",
    default: "info",
    defaultFor: { demo: "warn" },
    help: "pino log level; logs never contain prompt text",
    readBy: ["sidecar", "operator", "standalone", "demo"],
    writtenBy: ["webhook"],
    flag: "log-level",
  }),
} as const;
