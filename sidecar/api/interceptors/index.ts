// The API server's interceptors: errors onto the wire table (src/errors), caller identity,
// structured logs and metrics.
export { errorInterceptor, isRequestParseError, malformedRequest } from "./errors.js";
export { identityInterceptor } from "./identity.js";
export { loggingInterceptor } from "./logging.js";
export { metricsInterceptor } from "./metrics.js";
export { tracingInterceptor } from "./tracing.js";
