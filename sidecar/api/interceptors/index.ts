export { errorInterceptor, toConnectError } from "./errors.js";
export { callerAgent, identityInterceptor } from "./identity.js";
export { loggingInterceptor } from "./logging.js";
export { metricsInterceptor } from "./metrics.js";
