export {
  ALLOW_ALL_ENDPOINTS,
  type EndpointAllowlist,
  endpointHostPort,
  parseEndpointAllowlist,
} from "./endpoint-allowlist.js";
export { parseHostPort } from "./host-port.js";
