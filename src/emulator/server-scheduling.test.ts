// The scheduler's behaviour over real HTTP: /api/ps ordering, num_ctx reloads, eviction,
// keep_alive expiry, slot queueing, the queue limit, and client disconnects. Time is scaled;
// only generous wall-clock bounds derived from the scale are asserted.
import { afterEach, describe, expect, it } from "vitest";
import { parseNdjson, postJson, waitFor } from "../../test/helpers/emulator-http.js";
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from "./index.js";

const MiB = 1024 * 1024;
const open: EmulatorHandle[] = [];

async function emulator(options: EmulatorOptions): Promise<EmulatorHandle> {
  const emu = await startEmulator({ listen: "127.0.0.1:0", ...options });
  open.push(emu);
  return emu;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
});

type PsEntry = { name: string; size: number; size_vram: number; expires_at: string; context_length: number };
async function ps(emu: EmulatorHandle): Promise<PsEntry[]> {
  const res = await fetch(`${emu.url}/api/ps`);
  return ((await res.json()) as { models: PsEntry[] }).models;
}

const say = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: "user", content: "hello" }],
  stream: false,
  ...extra,
});

// Small models with round numbers: KV 0.125 MiB/token; at num_ctx 4096 the slab is 512 MiB.
const small = {
  "a:1b": { onDiskMiB: 1024, kvMiBPerToken: 0.125 },
  "b:2b": { onDiskMiB: 2048, kvMiBPerToken: 0.125 },
  "c:3b": { onDiskMiB: 3072, kvMiBPerToken: 0.125 },
};

describe("/api/ps", () => {
  it("lists resident models sorted by expires_at descending, forever first", async () => {
    const emu = await emulator({ models: small, vramMiB: 16_000, contextLength: 4096, timeScale: 0.001 });
    await postJson(`${emu.url}/api/generate`, { model: "a:1b", keep_alive: "10m" });
    await postJson(`${emu.url}/api/generate`, { model: "b:2b", keep_alive: -1 });
    await postJson(`${emu.url}/api/generate`, { model: "c:3b", keep_alive: 3600 });
    const models = await ps(emu);
    expect(models.map((m) => m.name)).toEqual(["b:2b", "c:3b", "a:1b"]);
    const times = models.map((m) => Date.parse(m.expires_at));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    // Forever is Go's now + MaxInt64 ns: some 292 years out.
    expect(new Date(times[0] as number).getUTCFullYear()).toBeGreaterThan(2300);
    expect(models.map((m) => m.size)).toEqual([2560 * MiB, 3584 * MiB, 1536 * MiB]);
    expect(models.every((m) => m.context_length === 4096 && m.size === m.size_vram)).toBe(true);
  });
});

describe("num_ctx", () => {
  it("reloads the model when a request's num_ctx differs from the loaded one", async () => {
    const emu = await emulator({ models: small, vramMiB: 16_000, contextLength: 4096, timeScale: 0.001 });
    const first = JSON.parse(
      (await postJson(`${emu.url}/api/chat`, say("a:1b", { options: { num_ctx: 2048 } }))).text,
    );
    expect(first.load_duration).toBeGreaterThanOrEqual(1e9);
    expect((await ps(emu))[0]).toMatchObject({ context_length: 2048, size: (1024 + 256) * MiB });
    const same = JSON.parse(
      (await postJson(`${emu.url}/api/chat`, say("a:1b", { options: { num_ctx: 2048 } }))).text,
    );
    expect(same.load_duration ?? 0).toBeLessThan(1e8);
    const other = JSON.parse(
      (await postJson(`${emu.url}/api/chat`, say("a:1b", { options: { num_ctx: 8192 } }))).text,
    );
    // unload (1 s) + load (1 s), in emulated ns
    expect(other.load_duration).toBeGreaterThanOrEqual(2e9);
    expect((await ps(emu))[0]).toMatchObject({ context_length: 8192, size: (1024 + 1024) * MiB });
    // No num_ctx means the server default, which differs again: another reload.
    const dflt = JSON.parse((await postJson(`${emu.url}/api/chat`, say("a:1b"))).text);
    expect(dflt.load_duration).toBeGreaterThanOrEqual(2e9);
    expect((await ps(emu))[0]?.context_length).toBe(4096);
  });
});

describe("eviction", () => {
  it("evicts the idle model with the shortest keep_alive left when a new one does not fit", async () => {
    const emu = await emulator({ models: small, vramMiB: 6000, contextLength: 4096, timeScale: 0.001 });
    await postJson(`${emu.url}/api/generate`, { model: "a:1b", keep_alive: "1h" });
    await postJson(`${emu.url}/api/generate`, { model: "b:2b", keep_alive: "10m" });
    // 1536 + 2560 + 3584 > 6000: b goes.
    const c = await postJson(`${emu.url}/api/generate`, { model: "c:3b" });
    expect(JSON.parse(c.text).done_reason).toBe("load");
    expect((await ps(emu)).map((m) => m.name).sort()).toEqual(["a:1b", "c:3b"]);
  });

  it("never evicts a busy model: the new one waits until another is idle", async () => {
    const emu = await emulator({
      models: small,
      vramMiB: 6000,
      contextLength: 4096,
      timeScale: 0.01,
      tokensPerS: 20,
      outputTokens: 100, // five seconds of generation each (50 wall ms)
    });
    await postJson(`${emu.url}/api/generate`, { model: "a:1b", keep_alive: "10m" });
    await postJson(`${emu.url}/api/generate`, { model: "b:2b", keep_alive: "1h" });
    // a (shorter keep_alive) is busy; b is idle, so b is the victim even though it expires later.
    const busy = postJson(`${emu.url}/api/chat`, say("a:1b"));
    await waitFor(() => emu.gpu().activeCount === 1);
    const c = await postJson(`${emu.url}/api/generate`, { model: "c:3b" });
    expect(c.status).toBe(200);
    expect((await ps(emu)).map((m) => m.name).sort()).toEqual(["a:1b", "c:3b"]);
    expect((await busy).status).toBe(200);

    // Now a and c are both busy and b cannot fit: it waits for one of them to finish.
    const runs = [postJson(`${emu.url}/api/chat`, say("a:1b")), postJson(`${emu.url}/api/chat`, say("c:3b"))];
    await waitFor(() => emu.gpu().activeCount === 2);
    const b = postJson(`${emu.url}/api/chat`, say("b:2b"));
    await waitFor(() => emu.gpu().pending.length === 1);
    expect(
      emu
        .gpu()
        .runners.map((r) => `${r.model}:${r.state}`)
        .sort(),
    ).toEqual(["a:1b:ready", "c:3b:ready"]);
    const bBody = JSON.parse((await b).text);
    await Promise.all(runs);
    // b waited for an answer to end, an unload (1 s) and its own load (2 s).
    expect(bBody.load_duration).toBeGreaterThan(3e9);
  });
});

describe("keep_alive", () => {
  it("unloads an idle model when keep_alive runs out", async () => {
    const emu = await emulator({ models: small, contextLength: 4096, timeScale: 0.002 });
    const started = Date.now();
    await postJson(`${emu.url}/api/generate`, { model: "a:1b", keep_alive: "5s" });
    expect((await ps(emu)).map((m) => m.name)).toEqual(["a:1b"]);
    await waitFor(async () => (await ps(emu)).length === 0, 3000);
    // 1 s load + 5 s keep_alive = 6 emulated s = 12 wall ms at least.
    expect(Date.now() - started).toBeGreaterThanOrEqual(10);
  });

  it("uses the server's default keep_alive when the request has none", async () => {
    const emu = await emulator({ models: small, contextLength: 4096, timeScale: 0.001, keepAlive: "2s" });
    await postJson(`${emu.url}/api/chat`, say("a:1b"));
    await waitFor(async () => (await ps(emu)).length === 0, 3000);
  });
});

describe("slots and queue", () => {
  const slow = {
    models: small,
    contextLength: 4096,
    timeScale: 0.02,
    tokensPerS: 20,
    outputTokens: 80, // 4 emulated s (80 wall ms) per answer
  };

  it("serves queued requests on one slot in arrival order", async () => {
    const emu = await emulator(slow);
    await postJson(`${emu.url}/api/generate`, { model: "a:1b" });
    const order: string[] = [];
    const send = (name: string) =>
      postJson(`${emu.url}/api/chat`, say("a:1b", { messages: [{ role: "user", content: name }] })).then(
        (r) => {
          order.push(name);
          return JSON.parse(r.text) as { total_duration: number; eval_duration: number };
        },
      );
    const first = send("first");
    await waitFor(() => emu.gpu().activeCount === 1);
    const second = send("second");
    await waitFor(() => emu.gpu().queueDepth === 1);
    const third = send("third");
    await waitFor(() => emu.gpu().queueDepth === 2);
    const results = await Promise.all([first, second, third]);
    expect(order).toEqual(["first", "second", "third"]);
    // Each waited for the ones before it: total time grows by about one answer each.
    const totals = results.map((r) => r.total_duration);
    expect(totals[1] as number).toBeGreaterThan((totals[0] as number) + 3e9);
    expect(totals[2] as number).toBeGreaterThan((totals[1] as number) + 3e9);
  });

  it("runs num_parallel requests at once", async () => {
    const emu = await emulator({ ...slow, numParallel: 2 });
    await postJson(`${emu.url}/api/generate`, { model: "a:1b" });
    const runs = [0, 1].map(() => postJson(`${emu.url}/api/chat`, say("a:1b")));
    await waitFor(() => emu.gpu().activeCount === 2);
    expect(emu.gpu().queueDepth).toBe(0);
    await Promise.all(runs);
  });

  it("answers 503 past OLLAMA_MAX_QUEUE", async () => {
    const emu = await emulator({ ...slow, maxQueue: 1 });
    await postJson(`${emu.url}/api/generate`, { model: "a:1b" });
    const running = postJson(`${emu.url}/api/chat`, say("a:1b"));
    await waitFor(() => emu.gpu().activeCount === 1);
    const queued = postJson(`${emu.url}/api/chat`, say("a:1b"));
    await waitFor(() => emu.gpu().queueDepth === 1);
    const refused = await postJson(`${emu.url}/api/chat`, say("a:1b"));
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.text)).toEqual({
      error: "server busy, please try again.  maximum pending requests exceeded",
    });
    const oa = await postJson(`${emu.url}/v1/chat/completions`, {
      model: "a:1b",
      messages: [{ role: "user", content: "x" }],
    });
    expect(oa.status).toBe(503);
    expect((await running).status).toBe(200);
    expect((await queued).status).toBe(200);
  });

  it("a client that disconnects mid-stream frees its slot", async () => {
    const emu = await emulator({ ...slow, outputTokens: 1000 });
    await postJson(`${emu.url}/api/generate`, { model: "a:1b" });
    const ac = new AbortController();
    const res = await fetch(`${emu.url}/api/chat`, {
      method: "POST",
      body: JSON.stringify({ model: "a:1b", messages: [{ role: "user", content: "long" }] }),
      signal: ac.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the first chunk arrived: it is streaming
    expect(emu.gpu().activeCount).toBe(1);
    ac.abort();
    await waitFor(() => emu.gpu().activeCount === 0, 2000);
    const next = await postJson(`${emu.url}/api/chat`, say("a:1b", { options: { num_predict: 2 } }));
    expect(JSON.parse(next.text).eval_count).toBe(2);
  });
});

describe("NDJSON under load", () => {
  it("every streamed line is a complete JSON object", async () => {
    const emu = await emulator({
      models: small,
      contextLength: 4096,
      timeScale: 0.0005,
      outputTokens: 200,
      numParallel: 4,
    });
    const bodies = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        postJson(`${emu.url}/api/chat`, { model: "a:1b", messages: [{ role: "user", content: `n${i}` }] }),
      ),
    );
    for (const b of bodies) {
      const lines = parseNdjson(b.text);
      expect(lines).toHaveLength(201);
      expect(lines.at(-1)?.eval_count).toBe(200);
    }
  });
});
