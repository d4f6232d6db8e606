export { parseHostPort } from "./host-port.js";
export {
  DEFAULT_LISTENER_LIMITS,
  http1LimitOptions,
  type ListenerLimits,
  resolveListenerLimits,
} from "./listener-limits.js";
