// The proxy's body limit and connection limits over real sockets. A body over the limit is
// answered 413 with a JSON error in the API's own shape (Ollama's on /api/*, OpenAI's on /v1/*)
// as soon as its declared length is known, the rest of it is discarded, and the connection is
// then closed with a FIN: the client reads the answer, never a reset. Connections that say
// nothing are closed at the header deadline, connections past the cap at once, and a streamed
// answer outlives the idle timeout.
import net from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyServer, startProxy } from "../../sidecar/proxy/server.js";
import { type Harness, HOMELAB_MODELS, startHarness } from "../helpers/proxy-harness.js";

const MB = 1_000_000;
let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    providers: [
      // Slow enough that a streamed answer lasts longer than the small idle timeout below.
      {
        name: "slow",
        vramMiB: 32_605,
        models: HOMELAB_MODELS,
        timeScale: 0.1,
        tokensPerS: 10,
        outputTokens: 200,
      },
    ],
  });
});
afterAll(async () => {
  await h?.close();
});

interface RawExchange {
  /** Everything the server sent. */
  text: string;
  /** How the connection ended: "end" (the server's FIN) or an error code. */
  ending: string;
}

/**
 * Sends a request head and then `bodyBytes` of body in 1 MiB writes over a raw socket (chunked
 * when `chunked`), reading whatever comes back, until the server closes the connection.
 */
function rawPost(address: string, path: string, bodyBytes: number, chunked = false): Promise<RawExchange> {
  const [host, port] = address.split(":");
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), host);
    const got: Buffer[] = [];
    let ending = "";
    socket.on("data", (c: Buffer) => got.push(c));
    socket.on("end", () => {
      ending ||= "end";
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      ending ||= err.code ?? "error";
    });
    socket.on("close", () => resolve({ text: Buffer.concat(got).toString("utf8"), ending }));
    socket.on("connect", async () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n` +
          (chunked ? "transfer-encoding: chunked\r\n\r\n" : `content-length: ${bodyBytes}\r\n\r\n`),
      );
      const piece = Buffer.alloc(1 << 20, "x");
      let sent = 0;
      while (sent < bodyBytes && !socket.destroyed) {
        const n = Math.min(piece.length, bodyBytes - sent);
        const chunk = piece.subarray(0, n);
        if (chunked) socket.write(`${n.toString(16)}\r\n`);
        let ok = socket.write(chunk);
        if (chunked) ok = socket.write("\r\n");
        sent += n;
        if (!ok) await new Promise((r) => socket.once("drain", r));
      }
      if (chunked && !socket.destroyed) socket.write("0\r\n\r\n");
    });
  });
}

function parseResponse(text: string) {
  const [head = "", body = ""] = text.split("\r\n\r\n", 2);
  return { statusLine: head.split("\r\n")[0], head, json: JSON.parse(body) as Record<string, unknown> };
}

describe("proxy body limit (default 8 MiB)", () => {
  it.each([
    ["/api/chat", 9 * MB],
    ["/api/chat", 100 * MB],
    ["/api/generate", 9 * MB],
  ])("%s with a %d-byte body: 413 in Ollama's shape, then a clean close", async (path, size) => {
    const r = await rawPost(h.proxy.address, path, size);
    const res = parseResponse(r.text);
    expect(res.statusLine).toBe("HTTP/1.1 413 Payload Too Large");
    expect(res.json).toMatchObject({
      error: expect.stringContaining("8388608 bytes"),
      reason: "body-too-large",
    });
    expect(r.ending).toBe("end");
  });

  it.each([9 * MB, 100 * MB])(
    "/v1/chat/completions with a %d-byte body: 413 in OpenAI's shape, then a clean close",
    async (size) => {
      const r = await rawPost(h.proxy.address, "/v1/chat/completions", size);
      const res = parseResponse(r.text);
      expect(res.statusLine).toBe("HTTP/1.1 413 Payload Too Large");
      expect(res.json).toMatchObject({
        error: {
          message: expect.stringContaining("8388608 bytes"),
          type: "invalid_request_error",
          param: null,
          code: "request_too_large",
          limit_bytes: 8388608,
        },
      });
      expect(r.ending).toBe("end");
    },
  );

  it("a chunked body (no declared length) over the limit: 413, then a clean close", async () => {
    const r = await rawPost(h.proxy.address, "/api/chat", 9 * MB, true);
    expect(parseResponse(r.text).statusLine).toBe("HTTP/1.1 413 Payload Too Large");
    expect(r.ending).toBe("end");
  });

  it("the official OpenAI client gets a 413 APIError naming the limit; nothing is claimed", async () => {
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const err = await client.chat.completions
      .create({ model: "qwen3:8b", messages: [{ role: "user", content: "x".repeat(9 * MB) }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain("8388608 bytes");
    expect(await h.tickets()).toEqual([]);
  });
});

describe("proxy connection limits", () => {
  let proxy: ProxyServer;
  beforeAll(async () => {
    proxy = await startProxy({
      host: "127.0.0.1",
      port: 0,
      scheduler: h.scheduler,
      providers: () => h.state.providers.peekAll(),
      limits: { maxConnections: 4, headersTimeoutMs: 300, requestTimeoutMs: 2000, idleTimeoutMs: 400 },
    });
  });
  afterAll(async () => {
    await proxy?.close(0);
  });

  const connect = async () => {
    const [host, port] = proxy.address.split(":");
    const socket = net.connect(Number(port), host);
    const got: Buffer[] = [];
    socket.on("data", (c: Buffer) => got.push(c));
    socket.on("error", () => undefined);
    const closed = new Promise<string>((r) => socket.once("close", () => r(Buffer.concat(got).toString())));
    await new Promise((r) => socket.once("connect", r));
    return { socket, closed };
  };

  it("closes a connection that sends nothing (408)", async () => {
    const c = await connect();
    expect(await c.closed).toMatch(/^(HTTP\/1\.1 408 |$)/);
  });

  it("a streamed answer outlives the idle and request timeouts", async () => {
    const res = await fetch(`http://${proxy.address}/api/chat`, {
      method: "POST",
      body: JSON.stringify({ model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    // An idle connection opened now is closed for idleness while the answer is still streaming.
    const probe = await connect();
    probe.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await probe.closed;
    let text = Buffer.from(first.value!).toString();
    let streamingAfterProbe = false;
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      streamingAfterProbe = true;
      text += Buffer.from(r.value).toString();
    }
    expect(streamingAfterProbe, "the answer ended before the idle timeout: make it longer").toBe(true);
    const lines = text.trim().split("\n");
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ done: true });
  });

  it("closes connections past the cap at once; the others are kept", async () => {
    const kept = [];
    for (let i = 0; i < 4; i++) {
      const c = await connect();
      c.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
      kept.push(c);
    }
    // Each answered: the server has taken all four.
    for (const c of kept) {
      await new Promise<void>((r) => {
        const done = () => (c.socket.bytesRead > 0 ? r() : c.socket.once("data", done));
        done();
      });
    }
    const extra = await Promise.all([1, 2].map(() => connect()));
    for (const c of extra) expect(await c.closed).toBe("");
    for (const c of kept) expect(c.socket.destroyed).toBe(false);
    for (const c of kept) c.socket.destroy();
  });
});
