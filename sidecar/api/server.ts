// One port for every way of calling the sidecar, served by connect-node from one set of
// handlers: gRPC, Connect and gRPC-Web over HTTP/2 (cleartext, prior knowledge), Connect and
// gRPC-Web over HTTP/1.1, with grpc.health.v1 and server reflection, plus /metrics, /healthz
// (liveness) and /readyz (readiness). The first bytes of each connection decide which Node
// server takes it: an HTTP/2 client preface starts with "PRI".

import { setMaxListeners } from "node:events";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { Code, ConnectError, type Interceptor, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Health as HealthService } from "../../src/gen/grpc/health/v1/health_pb.js";
import { SchedulerService } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { createHealth } from "./health.js";
import { errorInterceptor } from "./interceptors/index.js";
import { answerMalformedRequestsAsInvalid } from "./malformed-requests.js";
import { plainRoutes } from "./plain-routes.js";
import { createReflection, REFLECTION_SERVICES } from "./reflection.js";

export interface ApiServerOptions {
  /** Host to listen on; 127.0.0.1 by default (the agent is in the same pod). */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
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
}

export interface ApiServer {
  readonly port: number;
  readonly address: string;
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
  const shutdown = new AbortController();
  // Every call in flight listens to it (connect links each call's signal to it) until it ends.
  setMaxListeners(0, shutdown.signal);
  let serving = true;
  const health = createHealth({
    "": "SERVING",
    [SERVICE_NAME]: "SERVING",
    [LIVENESS_SERVICE]: "SERVING",
  });
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
    fallback: plainRoutes({ metrics: opts.metrics, serving: () => serving }),
  });

  const h2 = http2.createServer(handler);
  const sessions = new Set<http2.Http2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    session.on("error", () => session.destroy());
  });
  const http1 = http.createServer({ keepAliveTimeout: 65_000 }, handler);

  const sockets = new Set<net.Socket>();
  // noDelay: an answer's headers, message and trailers leave as separate small writes.
  const front = net.createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      if (head.length < 3) return;
      socket.off("data", onData);
      socket.pause();
      socket.unshift(head);
      // HTTP/2 sessions take already-buffered bytes from the socket themselves; resuming it
      // here would hand them to a 'data' listener instead.
      if (head.subarray(0, 3).toString("latin1") === "PRI") h2.emit("connection", socket);
      else {
        http1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });
  await new Promise<void>((resolve, reject) => {
    front.once("error", reject);
    front.listen(opts.port, opts.host, () => resolve());
  });
  const addr = front.address() as net.AddressInfo;

  return {
    port: addr.port,
    address: `${opts.host}:${addr.port}`,
    setServing(s) {
      serving = s;
      const status = s ? "SERVING" : "NOT_SERVING";
      health.setStatus("", status);
      health.setStatus(SERVICE_NAME, status);
    },
    async close() {
      shutdown.abort(new ConnectError("the server is shutting down", Code.Unavailable));
      // Stop accepting first; the listener's own close resolves only once every connection
      // it handed out has ended, so it is awaited last. HTTP/2 sessions get a GOAWAY: calls in
      // flight finish, new ones go elsewhere; whatever is left after DRAIN_MS is cut.
      const frontClosed = new Promise<void>((resolve) => front.close(() => resolve()));
      await Promise.race([
        Promise.all(
          [...sessions].map((session) => new Promise<void>((resolve) => session.close(() => resolve()))),
        ),
        new Promise<void>((resolve) => setTimeout(resolve, DRAIN_MS).unref()),
      ]);
      for (const session of sessions) session.destroy();
      http1.closeAllConnections();
      const http1Closed = new Promise<void>((resolve) => http1.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await Promise.all([frontClosed, http1Closed]);
    },
  };
}
