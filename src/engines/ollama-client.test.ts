import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../emulator/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { EngineError, isEngineError } from "./errors.js";
import { OllamaClient } from "./index.js";

let emu: EmulatorHandle;
let client: OllamaClient;

beforeAll(async () => {
  emu = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    models: { "qwen3:8b": 4863, "qwen3:14b": 9000 },
    timeScale: 0.001,
  });
  client = new OllamaClient({ baseUrl: emu.url, timeoutMs: 2000 });
});
afterAll(async () => {
  await client.close();
  await emu.close();
});

async function failure(p: Promise<unknown>): Promise<EngineError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

describe("OllamaClient against the emulator", () => {
  it("version, tags, show", async () => {
    expect(await client.version()).toBe("0.13.0");
    const tags = await client.tags();
    expect(tags.map((t) => [t.name, t.size])).toEqual([
      ["qwen3:8b", 4863 * 1024 * 1024],
      ["qwen3:14b", 9000 * 1024 * 1024],
    ]);
    const show = await client.show("qwen3:8b");
    expect(show.details?.family).toBe("qwen3");
  });

  it("load with num_ctx and keep_alive, ps, unload", async () => {
    const loaded = await client.load("qwen3:8b", { numCtx: 8192, keepAlive: "1h" });
    expect(loaded.done_reason).toBe("load");
    const ps = await client.ps();
    expect(ps.map((m) => [m.name, m.context_length, m.size_vram])).toEqual([
      ["qwen3:8b", 8192, (4863 + 1024) * 1024 * 1024],
    ]);
    const unloaded = await client.unload("qwen3:8b");
    expect(unloaded.done_reason).toBe("unload");
    await expect.poll(async () => (await client.ps()).length, { timeout: 2000 }).toBe(0);
  });

  it("an unknown model is an http error with status 404 and code NotFound", async () => {
    const err = await failure(client.show("ghost:1b"));
    expect(err.kind).toBe("http");
    expect(err.status).toBe(404);
    expect(err.code).toBe(ErrorCode.NotFound);
    expect(err.message).toMatch(/model "ghost:1b" not found/);
    expect(KubemootError.is(err)).toBe(true);
    expect(isEngineError(err, "http")).toBe(true);
  });

  it("a server error is an http error with its status", async () => {
    emu.setFaults([{ kind: "error", count: 1, status: 500, message: "boom" }]);
    const err = await failure(client.ps());
    expect(err).toMatchObject({ kind: "http", status: 500, code: ErrorCode.ProviderFailure });
    expect(err.message).toMatch(/boom/);
  });

  it("a slow server is a timeout", async () => {
    emu.setFaults([{ kind: "delay", ms: 60_000, count: 1 }]); // 60 wall ms at this scale
    const quick = new OllamaClient({ baseUrl: emu.url, timeoutMs: 20 });
    try {
      const err = await failure(quick.version());
      expect(err.kind).toBe("timeout");
      expect(err.code).toBe(ErrorCode.Timeout);
    } finally {
      await quick.close();
    }
  });

  it("a cut connection is a network error", async () => {
    emu.setFaults([{ kind: "reset", count: 1 }]);
    const err = await failure(client.tags());
    expect(err.kind).toBe("network");
  });

  it("a caller's abort signal is honoured", async () => {
    emu.setFaults([{ kind: "delay", ms: 1_000_000, count: 1 }]);
    const ac = new AbortController();
    const p = client.version({ signal: ac.signal });
    setTimeout(() => ac.abort(), 10);
    await expect(p).rejects.toThrow();
    emu.setFaults([]);
  });
});

describe("OllamaClient without a server", () => {
  it("a closed port is refused", async () => {
    const gone = await startEmulator({ listen: "127.0.0.1:0" });
    const url = gone.url;
    await gone.close();
    const c = new OllamaClient({ baseUrl: url, timeoutMs: 2000 });
    try {
      const err = await failure(c.version());
      expect(err.kind).toBe("refused");
      expect(err.code).toBe(ErrorCode.ProviderFailure);
      expect(err.endpoint).toBe(url);
      expect(err.operation).toBe("GET /api/version");
    } finally {
      await c.close();
    }
  });

  it("an answer that is not Ollama's is a protocol error", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>hello</html>");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const c = new OllamaClient({ baseUrl: `http://127.0.0.1:${port}` });
    try {
      expect((await failure(c.ps())).kind).toBe("protocol");
      expect((await failure(c.version())).kind).toBe("protocol");
    } finally {
      await c.close();
      await new Promise((r) => server.close(r));
    }
  });

  it("rejects a base URL that is not a URL", () => {
    expect(() => new OllamaClient({ baseUrl: "not a url" })).toThrow(EngineError);
  });
});
