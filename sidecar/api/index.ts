export type { ServingStatus } from "./health.js";
export {
  callerAgent,
  identityInterceptor,
  loggingInterceptor,
  metricsInterceptor,
} from "./interceptors/index.js";
export { type ApiServer, type ApiServerOptions, LIVENESS_SERVICE, startApiServer } from "./server.js";
