// The sidecar's API: one port for every way of calling the sidecar, served by connect-node
// from one set of handlers: gRPC, Connect and gRPC-Web over HTTP/2 (cleartext, prior knowledge)
// and over HTTP/1.1, with grpc.health.v1 and server reflection, plus /metrics, /healthz
// (liveness) and /readyz (readiness). Optionally a second, health-only port for the kubelet and
// Prometheus: grpc.health.v1, /healthz, /readyz and /metrics, and nothing that changes state.
// Both ports share one readiness: NOT_SERVING while draining or while the shared state is
// disconnected.

import { setMaxListeners } from "node:events";
import { Code, ConnectError, type Interceptor, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Health as HealthService } from "../../src/gen/grpc/health/v1/health_pb.js";
import { SchedulerService } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { type ListenerLimits, resolveListenerLimits } from "../../src/net/index.js";
import { createHealth } from "./health.js";
import { errorInterceptor } from "./interceptors/index.js";
import { type Listener, startListener } from "./listener.js";
import { answerMalformedRequestsAsInvalid } from "./malformed-requests.js";
import { plainRoutes, type Readiness } from "./plain-routes.js";
import { createReflection, REFLECTION_SERVICES } from "./reflection.js";

export interface ApiServerOptions {
  /** Host to listen on; 127.0.0.1 by default (the agent is in the same pod). */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** The health-only port (HOST:PORT split); none when absent. */
  health?: { host: string; port: number };
  impl: ServiceImpl<typeof SchedulerService>;
  /** Prometheus text for GET /metrics. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** Largest request message accepted (bytes, after decompression); default 4 MiB. */
  maxBodyBytes?: number;
  /**
   * Interceptors around every call, outermost first (logging, metrics, identity). Errors are
   * already mapped to their RPC codes when they pass.
   */
  interceptors?: readonly Interceptor[];
  /** Connection limits of both ports (src/net/listener-limits.ts defaults). */
  limits?: Partial<ListenerLimits>;
  /** The shared state's connection: readiness is NOT_SERVING while it is down. */
  stateConnection?: { readonly connected: boolean; onStatus(l: (connected: boolean) => void): () => void };
}

export interface ApiServer {
  readonly port: number;
  readonly address: string;
  /** The address the API socket is bound to (127.0.0.1 unless told otherwise). */
  readonly boundAddress: string;
  /** "host:port" of the health-only port; empty when there is none. */
  readonly healthAddress: string;
  /** Readiness goes NOT_SERVING (gRPC health and /readyz); liveness stays up. */
  setServing(serving: boolean): void;
  close(): Promise<void>;
}

const SERVICE_NAME = SchedulerService.typeName;
/**
 * A gRPC health service name that stays SERVING until the process exits: the liveness probe's
 * (readiness asks for the scheduler service, which goes NOT_SERVING while draining), so that a
 * drain can never read as a hang.
 */
export const LIVENESS_SERVICE = "kubemoot.liveness";
/** How long a shutdown waits for calls in flight on HTTP/2 before it cuts them. */
const DRAIN_MS = 5_000;

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const limits = resolveListenerLimits(opts.limits);
  const shutdown = new AbortController();
  // Every call in flight listens to it (connect links each call's signal to it) until it ends.
  setMaxListeners(0, shutdown.signal);
  let draining = false;
  let stateUp = opts.stateConnection?.connected ?? true;
  const readiness = (): Readiness => (draining ? "draining" : stateUp ? "serving" : "state-unavailable");
  const health = createHealth({
    "": "SERVING",
    [SERVICE_NAME]: "SERVING",
    [LIVENESS_SERVICE]: "SERVING",
  });
  const updateHealth = () => {
    const status = readiness() === "serving" ? "SERVING" : "NOT_SERVING";
    health.setStatus("", status);
    health.setStatus(SERVICE_NAME, status);
  };
  const unsubscribe = opts.stateConnection?.onStatus((connected) => {
    stateUp = connected;
    updateHealth();
  });
  updateHealth();
  const fallback = plainRoutes({ metrics: opts.metrics, readiness });
  const reflection = createReflection([SchedulerService, HealthService, ...REFLECTION_SERVICES]);
  const handler = connectNodeAdapter({
    routes(router) {
      router.service(SchedulerService, opts.impl);
      router.service(HealthService, health.impl);
      router.service(REFLECTION_SERVICES[0], reflection.v1);
      router.service(REFLECTION_SERVICES[1], reflection.v1alpha);
      answerMalformedRequestsAsInvalid(router);
    },
    interceptors: [...(opts.interceptors ?? []), errorInterceptor],
    readMaxBytes: opts.maxBodyBytes ?? 4 << 20,
    // Aborts every call's signal: streams (Wait, health Watch) end with UNAVAILABLE; unary calls
    // in flight finish (their handlers do not stop for it) while the connections drain.
    shutdownSignal: shutdown.signal,
    fallback,
  });
  const api = await startListener({ host: opts.host, port: opts.port, handler, limits });
  let healthPort: Listener | undefined;
  if (opts.health) {
    // Health only: every other path (Place included) is the fallback's 404, which gRPC clients
    // read as UNIMPLEMENTED.
    const healthHandler = connectNodeAdapter({
      routes: (router) => router.service(HealthService, health.impl),
      interceptors: [errorInterceptor],
      readMaxBytes: 64 << 10,
      shutdownSignal: shutdown.signal,
      fallback,
    });
    try {
      healthPort = await startListener({ ...opts.health, handler: healthHandler, limits });
    } catch (err) {
      await api.close(0);
      throw err;
    }
  }

  return {
    port: api.port,
    address: api.address,
    boundAddress: api.boundAddress,
    healthAddress: healthPort?.address ?? "",
    setServing(s) {
      draining = !s;
      updateHealth();
    },
    async close() {
      unsubscribe?.();
      shutdown.abort(new ConnectError("the server is shutting down", Code.Unavailable));
      // HTTP/2 sessions get a GOAWAY: calls in flight finish, new ones go elsewhere; whatever
      // is left after DRAIN_MS is cut.
      await Promise.all([api.close(DRAIN_MS), healthPort?.close(DRAIN_MS)]);
    },
  };
}
