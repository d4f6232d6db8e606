// One port for every way of calling the sidecar: gRPC over HTTP/2 (our lean server in ./grpc,
// with grpc.health.v1 and server reflection) and, over HTTP/1.1, Connect JSON and gRPC-Web
// (served by connect-node) plus /metrics, /healthz (liveness) and /readyz (readiness). The
// first bytes of each connection decide: an HTTP/2 client preface starts with "PRI".
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  file_kubemoot_scheduler_v1_scheduler,
  SchedulerService,
} from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { type GrpcMethod, grpcStreamHandler } from "./grpc/index.js";
import { createHealth, HEALTH_SERVICE } from "./health.js";
import { createReflection, REFLECTION_SERVICES } from "./reflection.js";
import { serviceMethods } from "./service-methods.js";

export interface ApiServerOptions {
  /** Host to listen on; 127.0.0.1 by default (the agent is in the same pod). */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  impl: ServiceImpl<typeof SchedulerService>;
  /** Prometheus text for GET /metrics. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** Largest request body accepted on HTTP/1.1 (bytes); default 4 MiB. */
  maxBodyBytes?: number;
  onInternalError?: (err: unknown, method: string) => void;
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

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const shutdown = new AbortController();
  const maxBodyBytes = opts.maxBodyBytes ?? 4 << 20;
  let serving = true;

  const health = createHealth({
    "": "SERVING",
    [SERVICE_NAME]: "SERVING",
    [LIVENESS_SERVICE]: "SERVING",
  });
  const methods = new Map<string, GrpcMethod>([
    ...serviceMethods(SchedulerService, opts.impl as never),
    ...health.methods,
    ...reflectionMethods(),
  ]);
  const h2 = http2.createServer();
  h2.on(
    "stream",
    grpcStreamHandler({
      methods,
      maxReceiveBytes: maxBodyBytes,
      shutdownSignal: shutdown.signal,
      onInternalError: (err, path) => opts.onInternalError?.(err, path.slice(path.lastIndexOf("/") + 1)),
    }),
  );
  const sessions = new Set<http2.Http2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    session.on("error", () => session.destroy());
  });

  const connectHandler = connectNodeAdapter({
    routes: (router) => router.service(SchedulerService, opts.impl),
    grpc: false, // gRPC goes to the lean server over HTTP/2; HTTP/1.1 carries Connect and gRPC-Web.
    readMaxBytes: maxBodyBytes,
    shutdownSignal: shutdown.signal,
    fallback: (req, res) => plainRoutes(req as http.IncomingMessage, res as http.ServerResponse),
  });
  const plainRoutes = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && url === "/healthz") return json(res, 200, { status: "ok" });
    if (req.method === "GET" && url === "/readyz") {
      return json(res, serving ? 200 : 503, { status: serving ? "serving" : "draining" });
    }
    if (req.method === "GET" && url === "/metrics" && opts.metrics) {
      opts.metrics().then(
        (m) => {
          res.writeHead(200, { "content-type": m.contentType });
          res.end(m.body);
        },
        (err) => json(res, 500, { error: String(err) }),
      );
      return;
    }
    json(res, 404, { error: `no route for ${req.method} ${url}` });
  };
  const http1 = http.createServer({ keepAliveTimeout: 65_000 }, connectHandler);

  const sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
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
      shutdown.abort();
      // Stop accepting first; the listener's own close resolves only once every connection
      // it handed out has ended, so it is awaited last. HTTP/2 sessions get a GOAWAY: calls in
      // flight finish, new ones go elsewhere; whatever is left after 5 s is cut.
      const frontClosed = new Promise<void>((resolve) => front.close(() => resolve()));
      await Promise.race([
        Promise.all(
          [...sessions].map((session) => new Promise<void>((resolve) => session.close(() => resolve()))),
        ),
        new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref()),
      ]);
      for (const session of sessions) session.destroy();
      http1.closeAllConnections();
      const http1Closed = new Promise<void>((resolve) => http1.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await Promise.all([frontClosed, http1Closed]);
    },
  };
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Server reflection (v1 and v1alpha) over the scheduler's descriptors, for grpcurl and friends. */
function reflectionMethods(): [string, GrpcMethod][] {
  const reflect = createReflection({
    files: [file_kubemoot_scheduler_v1_scheduler],
    extraServices: [HEALTH_SERVICE],
  });
  const method: GrpcMethod = {
    kind: "bidi_streaming",
    // A malformed request throws INVALID_ARGUMENT, which ends the stream with that status.
    handle: async (requests, _call, send) => {
      for await (const request of requests) await send(reflect(request));
    },
  };
  return REFLECTION_SERVICES.map((service) => [`/${service}/ServerReflectionInfo`, method]);
}
