export {
  ALLOW_ALL_ENDPOINTS,
  type EndpointAllowlist,
  endpointHostPort,
  parseEndpointAllowlist,
} from "./endpoint-allowlist.js";
export { parseHostPort } from "./host-port.js";
export { sendJson, sendText } from "./http-answers.js";
export { http1LimitOptions, type ListenerLimits, resolveListenerLimits } from "./listener-limits.js";
