// Connection limits of the API and health ports over real sockets, with small configured
// timeouts: connections that say nothing, or half an HTTP/2 preface, or half a request head,
// are closed by the server; idle HTTP/1.1 and HTTP/2 connections are closed; connections past
// the cap are closed at once while the others keep working; and a quiet Wait stream outlives
// the idle timeout. Ordering is by events (a probe connection closed for idleness), never by
// measuring time.
import http2 from "node:http2";
import net from "node:net";
import type { ServiceImpl } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SchedulerService } from "../../src/gen/kubemoot/scheduler/v1/scheduler_pb.js";
import { type Json, schedulerClient } from "../../test/helpers/grpc-client.js";
import { type ApiServer, startApiServer } from "./server.js";

const LIMITS = { headersTimeoutMs: 300, requestTimeoutMs: 2000, idleTimeoutMs: 500, maxConnections: 64 };

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A raw TCP connection; `closed` settles when the server closes it (we never do before). */
async function rawSocket(address: string) {
  const [host, port] = address.split(":");
  const socket = net.connect(Number(port), host);
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  const closed = new Promise<string>((resolve) => {
    socket.on("error", () => undefined);
    socket.once("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return { socket, closed, received: () => Buffer.concat(chunks).toString("latin1") };
}

/** An HTTP/2 session that made one request; `closed` settles when the server ends it. */
async function idleH2Session(address: string) {
  const session = http2.connect(`http://${address}`);
  session.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => session.once("close", resolve));
  await new Promise<void>((resolve, reject) => {
    const req = session.request({ ":path": "/healthz" });
    req.on("response", () => undefined);
    req.on("data", () => undefined);
    req.on("end", resolve);
    req.on("error", reject);
    req.end();
  });
  return { session, closed };
}

let gate = deferred();
let waitStarted = deferred();
let api: ApiServer;

beforeAll(async () => {
  api = await startApiServer({
    host: "127.0.0.1",
    port: 0,
    health: { host: "127.0.0.1", port: 0 },
    limits: LIMITS,
    impl: {
      async *wait() {
        waitStarted.resolve();
        await gate.promise;
        yield { event: { case: "waiting", value: {} } };
      },
    } as Partial<ServiceImpl<typeof SchedulerService>> as ServiceImpl<typeof SchedulerService>,
  });
});
afterAll(async () => {
  await api?.close();
});

describe.each([
  ["API", () => api.address],
  ["health", () => api.healthAddress],
])("the %s port", (_name, address) => {
  it("closes a connection that sends nothing", async () => {
    const c = await rawSocket(address());
    expect(await c.closed).toBe("");
  });

  it("closes a connection that sent half an HTTP/2 preface", async () => {
    const c = await rawSocket(address());
    c.socket.write("PRI * HTTP/2.0\r\n");
    expect(await c.closed).toBe("");
  });

  it("closes a connection that sent half a request head (408)", async () => {
    const c = await rawSocket(address());
    c.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    expect(await c.closed).toMatch(/^HTTP\/1\.1 408/);
  });

  it("closes an idle HTTP/1.1 keep-alive connection after its answer", async () => {
    const c = await rawSocket(address());
    c.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(await c.closed).toMatch(/^HTTP\/1\.1 200/);
  });

  it("closes an HTTP/2 session with no stream in flight", async () => {
    const s = await idleH2Session(address());
    await s.closed;
    expect(s.session.destroyed).toBe(true);
  });
});

describe("a Wait stream", () => {
  it("outlives the idle timeout while it is in flight", async () => {
    gate = deferred();
    waitStarted = deferred();
    const client = schedulerClient(api.address);
    try {
      const got: Json[] = [];
      const stream = client.stream("Wait", {}, (m) => got.push(m));
      await waitStarted.promise;
      // A session opened after the Wait went quiet, closed for idleness: the Wait's session has
      // been quiet for longer than the idle timeout by then.
      await (await idleH2Session(api.address)).closed;
      gate.resolve();
      expect(await stream.done).toHaveLength(1);
      expect(got[0]).toMatchObject({ waiting: {} });
    } finally {
      client.close();
    }
  });
});

describe("the connection cap", () => {
  let capped: ApiServer;
  beforeAll(async () => {
    capped = await startApiServer({
      host: "127.0.0.1",
      port: 0,
      health: { host: "127.0.0.1", port: 0 },
      limits: {
        maxConnections: 4,
        headersTimeoutMs: 20_000,
        requestTimeoutMs: 20_000,
        idleTimeoutMs: 20_000,
      },
      impl: {} as never,
    });
  });
  afterAll(async () => {
    await capped?.close();
  });

  const ask = (c: Awaited<ReturnType<typeof rawSocket>>) =>
    new Promise<string>((resolve) => {
      const before = c.received().length;
      const onData = () => {
        const text = c.received().slice(before);
        if (text.includes('"status"')) {
          c.socket.off("data", onData);
          resolve(text);
        }
      };
      c.socket.on("data", onData);
      c.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    });

  it.each([
    ["API", () => capped.address],
    ["health", () => capped.healthAddress],
  ])("on the %s port closes connections past it at once; the others keep working", async (_n, address) => {
    const kept = [];
    for (let i = 0; i < 4; i++) {
      const c = await rawSocket(address());
      expect(await ask(c)).toMatch(/^HTTP\/1\.1 200/);
      kept.push(c);
    }
    const extra = await Promise.all([1, 2, 3].map(() => rawSocket(address())));
    for (const c of extra) expect(await c.closed).toBe("");
    for (const c of kept) expect(await ask(c)).toMatch(/^HTTP\/1\.1 200/);
    for (const c of kept) c.socket.destroy();
    await Promise.all(kept.map((c) => c.closed));
  });
});
