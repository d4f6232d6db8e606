// One listening port serving a connect-node handler over HTTP/2 (cleartext, prior knowledge)
// and HTTP/1.1, with the listener limits (src/net/listener-limits.ts). The first bytes of a
// connection decide which Node server takes it: the whole HTTP/2 client preface, or anything
// else for HTTP/1.1. A connection that sends nothing, or half a preface, is closed at the
// header deadline; an HTTP/2 session with no stream in flight is closed after the idle
// timeout, and one that is streaming (Wait, health Watch) is never cut for being quiet.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { http1LimitOptions, type ListenerLimits } from "../../src/net/index.js";

type Handler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

export interface Listener {
  readonly port: number;
  /** "host:port" as asked for, with the bound port. */
  readonly address: string;
  /** The address the socket is bound to (e.g. 127.0.0.1). */
  readonly boundAddress: string;
  /** Stops accepting; HTTP/2 sessions get a GOAWAY and `drainMs` to finish; then everything is cut. */
  close(drainMs: number): Promise<void>;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export async function startListener(o: {
  host: string;
  port: number;
  handler: Handler;
  limits: ListenerLimits;
}): Promise<Listener> {
  const { limits } = o;
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: limits.maxStreams } }, o.handler);
  const sessions = new Set<http2.Http2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    let streams = 0;
    session.on("stream", (stream) => {
      streams++;
      stream.once("close", () => {
        streams--;
        // Quiet from now on counts from the last stream's end.
        if (streams === 0 && !session.destroyed) session.setTimeout(limits.idleTimeoutMs);
      });
    });
    // Node's session timer fires after idleTimeoutMs without a frame; a quiet stream in
    // flight (a Wait) keeps the session.
    session.setTimeout(limits.idleTimeoutMs);
    session.on("timeout", () => {
      if (streams === 0 && !session.closed) session.close();
    });
    session.on("close", () => sessions.delete(session));
    session.on("error", () => session.destroy());
  });
  const http1 = http.createServer({ ...http1LimitOptions(limits), noDelay: true }, o.handler as never);
  // This server never listens itself (the front hands it connections), and Node starts the
  // header and request deadline checks on 'listening'.
  http1.emit("listening");

  const sockets = new Set<net.Socket>();
  // noDelay: an answer's headers, message and trailers leave as separate small writes.
  const front = net.createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    // Until its protocol is known, the connection has the header deadline to say it.
    socket.setTimeout(limits.headersTimeoutMs, () => socket.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const n = Math.min(head.length, PREFACE.length);
      const prefaceSoFar = head.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (prefaceSoFar && head.length < PREFACE.length) return;
      socket.off("data", onData);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(head);
      // HTTP/2 sessions take already-buffered bytes from the socket themselves; resuming it
      // here would hand them to a 'data' listener instead.
      if (prefaceSoFar) h2.emit("connection", socket);
      else {
        http1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });
  front.maxConnections = limits.maxConnections;
  await new Promise<void>((resolve, reject) => {
    front.once("error", reject);
    front.listen(o.port, o.host, () => resolve());
  });
  const addr = front.address() as net.AddressInfo;

  return {
    port: addr.port,
    address: `${o.host}:${addr.port}`,
    boundAddress: addr.address,
    async close(drainMs) {
      // Stop accepting first; the listener's own close resolves only once every connection
      // it handed out has ended, so it is awaited last.
      const frontClosed = new Promise<void>((resolve) => front.close(() => resolve()));
      await Promise.race([
        Promise.all(
          [...sessions].map((session) => new Promise<void>((resolve) => session.close(() => resolve()))),
        ),
        new Promise<void>((resolve) => setTimeout(resolve, drainMs).unref()),
      ]);
      for (const session of sessions) session.destroy();
      http1.closeAllConnections();
      const http1Closed = new Promise<void>((resolve) => http1.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await Promise.all([frontClosed, http1Closed]);
    },
  };
}
