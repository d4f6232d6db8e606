export {
  ALLOW_ALL_ENDPOINTS,
  type EndpointAllowlist,
  endpointHostPort,
  parseEndpointAllowlist,
} from "./endpoint-allowlist.js";
export { parseHostPort } from "./host-port.js";
export {
  DEFAULT_LISTENER_LIMITS,
  http1LimitOptions,
  type ListenerLimits,
  resolveListenerLimits,
} from "./listener-limits.js";
