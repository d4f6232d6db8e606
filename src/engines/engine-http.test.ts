// Probe calls over a real socket: an answer past the size bound fails as "protocol" instead of
// being read whole; error statuses come back as answers (a probe decides what a 404 means).
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineHttp } from "./engine-http.js";
import { answersTokenize, type ProbeMemo } from "./engine-probe.js";

let server: Server;
let url: string;
let tokenizeCalls = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/big") {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = "x".repeat(64 * 1024);
      for (let i = 0; i < 32; i++) res.write(chunk); // 2 MiB
      res.end();
    } else if (req.url === "/tokenize") {
      tokenizeCalls++;
      req.resume().on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    } else if (req.url === "/small") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    } else res.writeHead(404).end("not here");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("EngineHttp", () => {
  it("refuses an answer larger than its bound", async () => {
    const http = new EngineHttp({ baseUrl: url, maxBytes: 100_000 });
    await expect(http.get("/big")).rejects.toMatchObject({ kind: "protocol", operation: "GET /big" });
    // The connection pool is still usable afterwards.
    expect((await http.get("/small")).json).toEqual({ ok: true });
    await http.close();
  });

  it("reads an answer within the bound, and returns error statuses as answers", async () => {
    const http = new EngineHttp({ baseUrl: url, maxBytes: 4 * 1024 * 1024 });
    expect((await http.get("/big")).text.length).toBe(2 * 1024 * 1024);
    expect(await http.get("/nope")).toEqual({ status: 404, text: "not here", json: undefined });
    await http.close();
  });

  it("asks POST /tokenize once per memo, then answers from it", async () => {
    const http = new EngineHttp({ baseUrl: url });
    const memo: ProbeMemo = {};
    expect(await answersTokenize(http, memo, { content: "probe" })).toBe(true);
    expect(await answersTokenize(http, memo, { content: "probe" })).toBe(true);
    expect(tokenizeCalls).toBe(1);
    await http.close();
  });
});
