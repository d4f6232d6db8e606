// The operator's health endpoints for the kubelet: /healthz (the process answers) and /readyz
// (started and not stopping). Plain HTTP on its own port, so that probes never depend on the
// webhook's TLS or on Kubernetes being reachable.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startHealthServer(o: {
  host: string;
  port: number;
  ready: () => boolean;
}): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    const send = (status: number, body: object) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, { error: "GET only" });
    if (path === "/healthz") return send(200, { status: "ok" });
    if (path === "/readyz")
      return o.ready() ? send(200, { status: "ready" }) : send(503, { status: "not ready" });
    return send(404, { error: `no route ${path}` });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
