// A real HTTPS inventory endpoint for the webhook arm's tests (node:https, the test PKI's
// server certificate). Every request is recorded (path, raw headers, client certificate CN)
// before it is answered, so tests can assert what was — and was not — requested.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { TestPki } from "../helpers/pki.js";

export interface RecordedRequest {
  path: string;
  /** Header name/value pairs as received (names lowercased), repeats kept. */
  headers: [string, string][];
  clientCn: string | undefined;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface InventoryServer {
  url(path: string): string;
  requests: RecordedRequest[];
  /** Paths requested, in order. */
  paths(): string[];
  close(): Promise<void>;
}

export interface InventoryServerOptions {
  pki: TestPki;
  routes: Record<string, Handler>;
  /** Require and verify a client certificate signed by the test CA. */
  requireClientCert?: boolean;
}

export async function startInventoryServer(o: InventoryServerOptions): Promise<InventoryServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer(
    {
      key: o.pki.serverKey,
      cert: o.pki.serverCert,
      ca: o.pki.caCert,
      requestCert: o.requireClientCert === true,
      rejectUnauthorized: o.requireClientCert === true,
    },
    (req, res) => {
      const path = req.url ?? "";
      const headers: [string, string][] = [];
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
        headers.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!]);
      }
      const peer = (req.socket as TLSSocket).getPeerCertificate?.();
      const cn = peer && typeof peer.subject?.CN === "string" ? peer.subject.CN : undefined;
      requests.push({ path, headers, clientCn: cn });
      const handler = o.routes[path.split("?")[0]!];
      if (!handler) {
        res.writeHead(404).end("not found");
        return;
      }
      handler(req, res);
    },
  );
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  // A client refused at the handshake (wrong CA, no client cert) is expected here.
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `https://127.0.0.1:${port}${path}`,
    requests,
    paths: () => requests.map((r) => r.path),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
