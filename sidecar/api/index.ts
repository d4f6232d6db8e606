// The sidecar's gRPC and Connect API server (docs/design.md §4) and the interceptors its
// caller (sidecar/main.ts) composes in front of it.
export {
  identityInterceptor,
  loggingInterceptor,
  metricsInterceptor,
  tracingInterceptor,
} from "./interceptors/index.js";
export { lateService } from "./late-service.js";
export { type ApiServer, startApiServer } from "./server.js";
