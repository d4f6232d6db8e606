// Fault injection over real HTTP: at start and through the admin route.
import { afterEach, describe, expect, it } from "vitest";
import { parseNdjson, parseSse, postJson, waitFor } from "../../test/helpers/emulator-http.js";
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from "./index.js";

const open: EmulatorHandle[] = [];
async function emulator(options: EmulatorOptions = {}): Promise<EmulatorHandle> {
  const emu = await startEmulator({
    listen: "127.0.0.1:0",
    models: { "a:1b": { onDiskMiB: 1024, kvMiBPerToken: 0.125 } },
    contextLength: 4096,
    timeScale: 0.001,
    outputTokens: 10,
    ...options,
  });
  open.push(emu);
  return emu;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
});

const chat = { model: "a:1b", messages: [{ role: "user", content: "hi" }] };

describe("faults", () => {
  it("error-mid-stream: 200, some tokens, then a final {error} line", async () => {
    const emu = await emulator({
      faults: [{ kind: "error-mid-stream", afterTokens: 3, message: "runner crashed", count: 1 }],
    });
    const res = await postJson(`${emu.url}/api/chat`, chat);
    expect(res.status).toBe(200);
    const lines = parseNdjson(res.text);
    expect(lines).toHaveLength(4);
    expect(lines.slice(0, 3).every((l) => l.done === false)).toBe(true);
    expect(lines[3]).toEqual({ error: "runner crashed" });
    // The slot is free again and the next request is whole.
    await waitFor(() => emu.gpu().activeCount === 0);
    const again = parseNdjson((await postJson(`${emu.url}/api/chat`, chat)).text);
    expect(again.at(-1)).toMatchObject({ done: true, eval_count: 10 });
  });

  it("error-mid-stream on a non-streaming request is a 500 JSON error", async () => {
    const emu = await emulator({ faults: [{ kind: "error-mid-stream", afterTokens: 2 }] });
    const res = await postJson(`${emu.url}/api/generate`, { model: "a:1b", prompt: "x", stream: false });
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text).error).toMatch(/mid-stream/);
  });

  it("error-mid-stream over SSE ends with an OpenAI error event", async () => {
    const emu = await emulator({ faults: [{ kind: "error-mid-stream", afterTokens: 2 }] });
    const res = await postJson(`${emu.url}/v1/chat/completions`, { ...chat, stream: true });
    const events = parseSse(res.text);
    expect(events).toHaveLength(3);
    expect(events[2]).toMatchObject({ error: { type: "api_error" } });
  });

  it("drop: the connection is cut mid-answer, and the emulator goes on", async () => {
    const emu = await emulator({ faults: [{ kind: "drop", afterTokens: 2, count: 1 }] });
    await expect(postJson(`${emu.url}/api/chat`, chat)).rejects.toThrow();
    await waitFor(() => emu.gpu().activeCount === 0);
    const ok = await postJson(`${emu.url}/api/chat`, { ...chat, stream: false });
    expect(ok.status).toBe(200);
  });

  it("error: answers 500 (or the status given) count times, then recovers", async () => {
    const emu = await emulator({ faults: [{ kind: "error", count: 2, status: 502, path: "/api/ps" }] });
    expect((await fetch(`${emu.url}/api/tags`)).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${emu.url}/api/ps`);
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ error: "emulated fault: internal server error" });
    }
    expect((await fetch(`${emu.url}/api/ps`)).status).toBe(200);
    expect(emu.faults()).toEqual([]);
  });

  it("reset: the connection is destroyed", async () => {
    const emu = await emulator({ faults: [{ kind: "reset", count: 1 }] });
    await expect(fetch(`${emu.url}/api/version`)).rejects.toThrow();
    expect((await fetch(`${emu.url}/api/version`)).status).toBe(200);
  });

  it("delay: requests wait the emulated time, scaled", async () => {
    const emu = await emulator({ timeScale: 0.01, faults: [{ kind: "delay", ms: 10_000 }] });
    const t0 = Date.now();
    expect((await fetch(`${emu.url}/api/version`)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90); // 10 s × 0.01
  });

  it("refuse: connections are refused until the rule ends", async () => {
    const emu = await emulator();
    emu.setFaults([{ kind: "refuse", ms: 100_000 }]); // 100 wall ms
    const err = await fetch(`${emu.url}/api/version`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as { cause?: { code?: string } }).cause?.code)).toBe("ECONNREFUSED");
    await waitFor(async () => (await fetch(`${emu.url}/api/version`)).status === 200, 3000, 10);
    expect(emu.faults()).toEqual([]);
  });

  it("refuse set over the admin route, lifted in-process", async () => {
    const emu = await emulator();
    const res = await postJson(`${emu.url}/_emulator/faults`, { faults: [{ kind: "refuse" }] });
    expect(res.status).toBe(200);
    await waitFor(async () => {
      const e = await fetch(`${emu.url}/api/version`).catch((x: unknown) => x);
      return e instanceof Error;
    });
    emu.setFaults([]);
    await waitFor(async () => (await fetch(`${emu.url}/api/version`)).status === 200, 3000, 10);
  });

  it("stall: tokens stop, the slot stays taken, and leaving frees it", async () => {
    const emu = await emulator({ faults: [{ kind: "stall", afterTokens: 2 }] });
    const ac = new AbortController();
    const res = await fetch(`${emu.url}/api/chat`, {
      method: "POST",
      body: JSON.stringify(chat),
      signal: ac.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (parseNdjson(text).length < 2) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    await new Promise((r) => setTimeout(r, 50)); // 50 emulated s: nothing more comes
    expect(emu.gpu().activeCount).toBe(1);
    ac.abort();
    await waitFor(() => emu.gpu().activeCount === 0, 2000);
  });

  it("faults can be filtered by model", async () => {
    const emu = await emulator({
      models: { "a:1b": 1024, "b:1b": 1024 },
      faults: [
        { kind: "error", model: "b:1b:latest" },
        { kind: "error", model: "b:1b" },
      ],
    });
    expect((await postJson(`${emu.url}/api/chat`, { ...chat, stream: false })).status).toBe(200);
    expect((await postJson(`${emu.url}/api/chat`, { ...chat, model: "b:1b", stream: false })).status).toBe(
      500,
    );
  });
});

describe("admin routes", () => {
  it("GET, POST and DELETE /_emulator/faults, with validation", async () => {
    const emu = await emulator();
    const set = await postJson(`${emu.url}/_emulator/faults`, [{ kind: "delay", ms: 1 }]);
    expect(JSON.parse(set.text)).toEqual({ faults: [{ kind: "delay", ms: 1 }] });
    expect(await (await fetch(`${emu.url}/_emulator/faults`)).json()).toEqual({
      faults: [{ kind: "delay", ms: 1 }],
    });
    const bad = await postJson(`${emu.url}/_emulator/faults`, { faults: [{ kind: "meteor" }] });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toMatch(/faults\[0\]\.kind/);
    const broken = await postJson(`${emu.url}/_emulator/faults`, "{");
    expect(broken.status).toBe(400);
    const del = await fetch(`${emu.url}/_emulator/faults`, { method: "DELETE" });
    expect(await del.json()).toEqual({ faults: [] });
    expect((await fetch(`${emu.url}/_emulator/nothing`)).status).toBe(404);
  });

  it("GET /_emulator/state shows loads in flight, slots and the queue", async () => {
    const emu = await emulator({ timeScale: 0.01, outputTokens: 500 });
    const load = postJson(`${emu.url}/api/generate`, { model: "a:1b" });
    await waitFor(async () => {
      const s = (await (await fetch(`${emu.url}/_emulator/state`)).json()) as {
        models: Array<{ state: string }>;
      };
      return s.models[0]?.state === "loading";
    });
    await load;
    const a = postJson(`${emu.url}/api/chat`, chat);
    await waitFor(() => emu.gpu().activeCount === 1);
    const b = postJson(`${emu.url}/api/chat`, chat);
    await waitFor(() => emu.gpu().queueDepth === 1);
    const state = (await (await fetch(`${emu.url}/_emulator/state`)).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ activeCount: 1, queueDepth: 1, usedMiB: 1536 });
    expect(state.models).toEqual([
      expect.objectContaining({ name: "a:1b", state: "ready", active: 1, waiting: 1 }),
    ]);
    await postJson(`${emu.url}/_emulator/reset`, {});
    // Reset ends the streaming answer with an error line and the queued one with a 500.
    const streaming = await a;
    expect(streaming.status).toBe(200);
    expect(parseNdjson(streaming.text).at(-1)).toEqual({ error: "emulator reset" });
    const queued = await b;
    expect(queued.status).toBe(500);
    expect(JSON.parse(queued.text)).toEqual({ error: "emulator reset" });
  });
});
