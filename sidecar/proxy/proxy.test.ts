// The proxy over real HTTP: two emulated GPUs (an RTX 5090 and an RTX 4090 with the qwen3
// catalog), the provider publisher, an embedded memory state store, a Scheduler and the proxy.
// Each test gets a fresh harness so that no residency, ticket or learned ratio leaks between them.
import { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { parseNdjson, parseSse, waitFor } from "../../test/helpers/emulator-http.js";
import { type Harness, type HarnessOptions, startHarness } from "../../test/helpers/proxy-harness.js";
import type { CallRecord, TruncationReport } from "./index.js";

let h: Harness;
const open: Harness[] = [];
async function harness(o: HarnessOptions = {}): Promise<Harness> {
  h = await startHarness(o);
  open.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: () => Record<string, unknown>;
}

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Answer> {
  const res = await fetch(`${h.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** Starts a streaming call and resolves once its first bytes arrived; `abort` hangs up. */
async function openStream(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ res: Response; first: string; abort: () => void; rest: Promise<string> }> {
  const ctl = new AbortController();
  const res = await fetch(`${h.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: ctl.signal,
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  const firstChunk = await reader.read();
  const first = dec.decode(firstChunk.value ?? new Uint8Array());
  const rest = (async () => {
    let text = "";
    try {
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        text += dec.decode(r.value);
      }
    } catch {
      // aborted
    }
    return text;
  })();
  return { res, first, abort: () => ctl.abort(), rest };
}

const chat = (model: string, content = "Say something short.", extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: "user", content }],
  ...extra,
});

async function waitEntries(): Promise<number> {
  return (await h.state.demand.snapshot()).wait.length;
}

async function noTickets(): Promise<void> {
  await waitFor(async () => (await h.tickets()).length === 0, 3000);
  expect(h.scheduler.activeTickets).toBe(0);
}

describe("proxy: Ollama and OpenAI APIs", () => {
  it("/api/chat streams NDJSON through the placed provider, with attribution headers", async () => {
    await harness();
    const res = await post("/api/chat", chat("qwen3:8b"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    // 8b goes to the small card (spec/placement.md §4 worked example).
    expect(res.headers.get("x-kubemoot-provider")).toBe("rtx4090");
    expect(res.headers.get("x-kubemoot-model")).toBe("qwen3:8b");
    expect(res.headers.get("x-kubemoot-cold-load")).toBe("true");
    expect(res.headers.get("x-kubemoot-evicted")).toBe("");
    const ticket = res.headers.get("x-kubemoot-ticket") ?? "";
    expect(ticket).not.toBe("");
    const lines = parseNdjson(res.text);
    expect(lines.length).toBeGreaterThan(2);
    expect(
      lines
        .slice(0, -1)
        .every((l) => l.done === false && typeof (l.message as { content: string }).content === "string"),
    ).toBe(true);
    const last = lines.at(-1) as Record<string, unknown>;
    expect(last).toMatchObject({ done: true, done_reason: "stop", model: "qwen3:8b" });
    expect(last.prompt_eval_count).toBeGreaterThan(0);
    await noTickets();
    // The release carried the engine's count: attribution has it, and the ratio was learned.
    const a = h.scheduler.attribute(ticket);
    expect(a).toMatchObject({ success: true, promptTokens: last.prompt_eval_count, truncated: false });
    expect(h.scheduler.estimatePromptTokens(0, 3500)).not.toBe(1000);
    expect(
      h
        .emulator("rtx4090")
        .gpu()
        .runners.map((r) => r.model),
    ).toEqual(["qwen3:8b"]);
  });

  it("/api/chat non-streaming answers one JSON object; the next call is warm", async () => {
    await harness();
    const first = await post("/api/chat", chat("qwen3:8b", "hello", { stream: false }));
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toContain("application/json");
    const body = first.json();
    expect(body).toMatchObject({ done: true, model: "qwen3:8b", message: { role: "assistant" } });
    expect(((body.message as { content: string }).content ?? "").length).toBeGreaterThan(0);
    const second = await post("/api/chat", chat("qwen3:8b", "again", { stream: false }));
    expect(second.status).toBe(200);
    expect(second.headers.get("x-kubemoot-cold-load")).toBe("false");
    expect(second.headers.get("x-kubemoot-provider")).toBe(first.headers.get("x-kubemoot-provider"));
    await noTickets();
  });

  it("/api/generate streams and answers whole, with num_predict as the output cap", async () => {
    await harness();
    const s = await post("/api/generate", {
      model: "qwen3:14b",
      prompt: "Write a haiku.",
      options: { num_predict: 5 },
    });
    expect(s.status).toBe(200);
    const lines = parseNdjson(s.text);
    expect(lines.slice(0, -1).every((l) => typeof l.response === "string" && l.done === false)).toBe(true);
    expect(lines.at(-1)).toMatchObject({ done: true, done_reason: "length", eval_count: 5 });
    const whole = await post("/api/generate", { model: "qwen3:14b", prompt: "Again.", stream: false });
    expect(whole.status).toBe(200);
    expect(whole.json()).toMatchObject({ done: true, model: "qwen3:14b" });
    expect(typeof whole.json().response).toBe("string");
    await noTickets();
  });

  it("/v1/chat/completions: SSE when streaming (no usage chunk unless asked), JSON otherwise", async () => {
    await harness();
    const s = await post("/v1/chat/completions", { ...chat("qwen3:8b"), stream: true, max_tokens: 4 });
    expect(s.status).toBe(200);
    expect(s.headers.get("content-type")).toContain("text/event-stream");
    expect(s.headers.get("x-kubemoot-model")).toBe("qwen3:8b");
    const events = parseSse(s.text);
    expect(events.at(-1)).toBe("[DONE]");
    const objs = events.filter((e): e is Record<string, unknown> => e !== "[DONE]");
    // The proxy asked for usage on the caller's behalf and kept it from the caller.
    expect(objs.some((e) => "usage" in e)).toBe(false);
    expect(objs.filter((e) => (e.choices as unknown[]).length > 0).length).toBe(5); // 4 tokens + finish
    const ticket = s.headers.get("x-kubemoot-ticket") ?? "";
    await noTickets();
    expect(h.scheduler.attribute(ticket)?.promptTokens).toBeGreaterThan(0);

    const withUsage = await post("/v1/chat/completions", {
      ...chat("qwen3:8b"),
      stream: true,
      stream_options: { include_usage: true },
    });
    const usage = parseSse(withUsage.text).find((e) => e !== "[DONE]" && "usage" in e) as { usage: unknown };
    expect(usage.usage).toMatchObject({ prompt_tokens: expect.any(Number) });

    const whole = await post("/v1/chat/completions", { ...chat("qwen3:8b"), max_completion_tokens: 3 });
    expect(whole.status).toBe(200);
    expect(whole.json()).toMatchObject({ object: "chat.completion", usage: { completion_tokens: 3 } });
    await noTickets();
  });

  it("takes an in-tolerance warm alternative from X-Kubemoot-Candidates and says so", async () => {
    await harness();
    expect((await post("/api/chat", chat("qwen3:8b", "warm up", { stream: false }))).status).toBe(200);
    const res = await post("/api/chat", chat("qwen3:14b", "hi", { stream: false }), {
      "x-kubemoot-candidates": JSON.stringify([
        { model: "qwen3:14b", score: 80 },
        { model: "qwen3:8b", score: 75 },
      ]),
      "x-kubemoot-agent": "crew/analyst",
      "x-kubemoot-thread": "t-1",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-kubemoot-model")).toBe("qwen3:8b");
    expect(res.json().model).toBe("qwen3:8b");
    await noTickets();
  });

  it("serves many concurrent calls (queued at the warm copy) and leaves nothing behind", async () => {
    let maxInflight = 0;
    await harness({ hooks: { onInflight: (n) => (maxInflight = Math.max(maxInflight, n)) } });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    const client = new Agent({ connections: 64 });
    try {
      expect((await post("/api/chat", chat("qwen3:8b", "warm", { stream: false }))).status).toBe(200);
      // Each call is held 200 ms at the provider, so that they are all in flight together.
      h.emulator("rtx4090").setFaults([{ kind: "delay", ms: 20_000, path: "/api/chat" }]);
      const url = new URL(h.url);
      const answers = await Promise.all(
        Array.from({ length: 24 }, async (_, i) => {
          const r = await client.request({
            origin: url.origin,
            path: "/api/chat",
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(chat("qwen3:8b", `call ${i}`, { stream: i % 2 === 0 })),
          });
          await r.body.text();
          return { status: r.statusCode, ticket: String(r.headers["x-kubemoot-ticket"]) };
        }),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(24).fill(200));
      expect(new Set(answers.map((a) => a.ticket)).size).toBe(24);
      expect(maxInflight).toBeGreaterThan(16);
      await noTickets();
      expect(h.proxy.inflight).toBe(0);
    } finally {
      process.off("warning", onWarning);
      await client.close();
    }
    expect(warnings.filter((w) => w.includes("MaxListeners"))).toEqual([]);
  });

  it("serves the aggregated model lists, the version and the health check", async () => {
    await harness();
    expect((await post("/api/chat", chat("qwen3:8b", "x", { stream: false }))).status).toBe(200);
    await h.publisher.probeNow();
    const root = await fetch(`${h.url}/`);
    expect(await root.text()).toBe("Ollama is running");
    const head = await fetch(`${h.url}/`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await (await fetch(`${h.url}/api/version`)).json()).toEqual({ version: "0.13.0" });
    const tags = (await (await fetch(`${h.url}/api/tags`)).json()) as {
      models: Array<{ name: string; size: number }>;
    };
    expect(tags.models.map((m) => m.name)).toEqual(["qwen3:14b", "qwen3:235b", "qwen3:32b", "qwen3:8b"]);
    expect(tags.models.find((m) => m.name === "qwen3:14b")?.size).toBe(11_000 * 1024 * 1024);
    const ps = (await (await fetch(`${h.url}/api/ps`)).json()) as { models: Array<Record<string, unknown>> };
    expect(ps.models).toEqual([
      expect.objectContaining({ name: "qwen3:8b", provider: "rtx4090", context_length: 32768 }),
    ]);
    const models = (await (await fetch(`${h.url}/v1/models`)).json()) as {
      object: string;
      data: Array<{ id: string }>;
    };
    expect(models.object).toBe("list");
    expect(models.data.map((m) => m.id)).toContain("qwen3:32b");
    const show = await post("/api/show", { model: "qwen3:8b" });
    expect(show.status).toBe(200);
    expect((await fetch(`${h.url}/nope`)).status).toBe(404);
  });

  it("answers an unload request itself: the shared copy stays loaded", async () => {
    await harness();
    expect((await post("/api/generate", { model: "qwen3:8b", prompt: "x", stream: false })).status).toBe(200);
    const res = await post("/api/generate", { model: "qwen3:8b", keep_alive: 0 });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ done: true, done_reason: "unload" });
    await new Promise((r) => setTimeout(r, 50));
    expect(
      h
        .emulator("rtx4090")
        .gpu()
        .runners.map((r) => r.model),
    ).toEqual(["qwen3:8b"]);
    await noTickets();
  });
});

describe("proxy: context and num_ctx", () => {
  it("no silent truncation: a prompt larger than every context is 413 and never reaches a GPU", async () => {
    await harness();
    const res = await post("/api/chat", chat("qwen3:8b", "word ".repeat(40_000)));
    expect(res.status).toBe(413);
    expect(res.json()).toMatchObject({
      reason: "prompt-too-large",
      largest_context: 32768,
      prompt_tokens: 57143,
      error: expect.stringMatching(/context/i),
    });
    for (const e of h.emulators.values()) {
      expect(e.gpu().runners).toEqual([]);
      expect(e.gpu().pending).toEqual([]);
    }
    const oa = await post("/v1/chat/completions", chat("qwen3:8b", "word ".repeat(40_000)));
    expect(oa.status).toBe(413);
    await noTickets();
  });

  it("pins num_ctx: callers mixing num_ctx values do not reload the model", async () => {
    await harness();
    const a = await post("/api/chat", chat("qwen3:8b", "one", { stream: false, options: { num_ctx: 2048 } }));
    expect(a.status).toBe(200);
    const emu = h.emulator(a.headers.get("x-kubemoot-provider") ?? "");
    const [loaded] = emu.gpu().runners;
    expect(loaded).toMatchObject({ model: "qwen3:8b", numCtx: 32768 });
    for (const numCtx of [8192, 4096, undefined]) {
      const options = numCtx ? { num_ctx: numCtx } : undefined;
      const r = await post(
        "/api/chat",
        chat("qwen3:8b", "more", { stream: false, ...(options ? { options } : {}) }),
      );
      expect(r.status).toBe(200);
      expect(r.headers.get("x-kubemoot-cold-load")).toBe("false");
    }
    const [after] = emu.gpu().runners;
    expect(after?.loadStartedAt).toBe(loaded?.loadStartedAt);
    expect(after?.numCtx).toBe(32768);
    await noTickets();
  });

  it("with numCtxPolicy pass, the same calls do reload (the test can tell)", async () => {
    await harness({ proxy: { numCtxPolicy: "pass" } });
    const a = await post("/api/chat", chat("qwen3:8b", "one", { stream: false, options: { num_ctx: 2048 } }));
    const emu = h.emulator(a.headers.get("x-kubemoot-provider") ?? "");
    const before = emu.gpu().runners[0]?.loadStartedAt;
    await post("/api/chat", chat("qwen3:8b", "two", { stream: false, options: { num_ctx: 8192 } }));
    expect(emu.gpu().runners[0]?.loadStartedAt).not.toBe(before);
    expect(emu.gpu().runners[0]?.numCtx).toBe(8192);
    // pass still refuses a num_ctx that cannot hold the prompt.
    const cut = await post(
      "/api/chat",
      chat("qwen3:8b", "word ".repeat(2000), { options: { num_ctx: 1024 } }),
    );
    expect(cut.status).toBe(413);
    await noTickets();
  });

  it("refuses a larger num_ctx that the prompt and requested output need, rather than reload", async () => {
    await harness();
    const res = await post(
      "/api/chat",
      chat("qwen3:8b", "word ".repeat(20_000), { options: { num_ctx: 65536, num_predict: 8000 } }),
    );
    expect(res.status).toBe(413);
    expect(res.json()).toMatchObject({ reason: "prompt-too-large", largest_context: 32768 });
    expect(res.headers.get("x-kubemoot-ticket")).toBeTruthy();
    for (const e of h.emulators.values()) expect(e.gpu().runners).toEqual([]);
    await noTickets();
  });

  it("reports a silent cut (the engine filled num_ctx and dropped the rest) through the hook", async () => {
    const cuts: TruncationReport[] = [];
    const calls: CallRecord[] = [];
    await harness({ hooks: { onTruncation: (t) => cuts.push(t), onCall: (c) => calls.push(c) } });
    // Under "pass" the caller's num_ctx goes through. 4000 chars ≈ 1143 tokens by estimate,
    // so num_ctx 1143 passes the check, but the engine adds its chat template and cuts.
    const pass = await h.extraProxy({ numCtxPolicy: "pass" });
    const res = await fetch(`http://127.0.0.1:${pass.port}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chat("qwen3:8b", "x".repeat(4000), { stream: false, options: { num_ctx: 1143 } })),
    });
    expect(res.status).toBe(200);
    const ticket = res.headers.get("x-kubemoot-ticket") ?? "";
    expect(((await res.json()) as Record<string, unknown>).prompt_eval_count).toBe(1143);
    expect(cuts).toEqual([
      expect.objectContaining({
        ticketId: ticket,
        estimatedPromptTokens: 1143,
        reportedPromptTokens: 1143,
        numCtx: 1143,
      }),
    ]);
    expect(calls.at(-1)).toMatchObject({ truncated: true, ticketId: ticket });
    await noTickets();
    // A cut prompt's count is not learned: the estimate stays at 3.5 chars per token.
    expect(h.scheduler.estimatePromptTokens(0, 3500)).toBe(1000);
  });
});

describe("proxy: busy GPUs and disconnects", () => {
  /** 32b fills the 5090 and 14b fills the 4090, both mid-answer (stalled). */
  async function fillBothCards(stallMs32?: number) {
    h.emulator("rtx5090").setFaults([
      {
        kind: "stall",
        model: "qwen3:32b",
        afterTokens: 2,
        count: 1,
        ...(stallMs32 ? { ms: stallMs32 } : {}),
      },
    ]);
    h.emulator("rtx4090").setFaults([{ kind: "stall", model: "qwen3:14b", afterTokens: 2, count: 1 }]);
    const a = await openStream("/api/chat", chat("qwen3:32b", "long one"));
    expect(a.res.headers.get("x-kubemoot-provider")).toBe("rtx5090");
    const b = await openStream("/api/chat", chat("qwen3:14b", "long two"));
    expect(b.res.headers.get("x-kubemoot-provider")).toBe("rtx4090");
    await h.publisher.probeNow(); // the observed footprints replace the estimates
    return { a, b };
  }
  const only8b = { "x-kubemoot-candidates": JSON.stringify([{ model: "qwen3:8b", score: 100 }]) };

  it("client disconnect mid-stream releases the ticket and aborts the upstream call", async () => {
    await harness();
    h.emulator("rtx4090").setFaults([{ kind: "stall", model: "qwen3:8b", afterTokens: 3 }]);
    const s = await openStream("/api/chat", chat("qwen3:8b"));
    expect(s.res.status).toBe(200);
    expect(s.first).toContain('"done":false');
    const ticket = s.res.headers.get("x-kubemoot-ticket") ?? "";
    expect(await h.tickets()).toHaveLength(1);
    s.abort();
    await noTickets();
    await waitFor(() => h.emulator("rtx4090").gpu().activeCount === 0, 3000);
    expect(h.scheduler.attribute(ticket)).toMatchObject({ error: "client went away" });
    await waitFor(() => h.proxy.inflight === 0, 3000);
  });

  it("gpu-busy: waits for capacity, then places (evicting the idle model) when a call ends", async () => {
    await harness();
    const { a, b } = await fillBothCards(40_000); // 32b's call ends ≈400 ms from now
    const t0 = Date.now();
    const c = await post("/api/chat", chat("qwen3:8b", "need a GPU", { stream: false }), only8b);
    expect(c.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThan(150);
    expect(c.headers.get("x-kubemoot-provider")).toBe("rtx5090");
    expect(c.headers.get("x-kubemoot-evicted")).toBe("qwen3:32b");
    expect(Number(c.headers.get("x-kubemoot-queue-wait-ms"))).toBeGreaterThan(100);
    expect(
      h
        .emulator("rtx5090")
        .gpu()
        .runners.map((r) => r.model),
    ).toEqual(["qwen3:8b"]);
    expect(await a.rest).toContain('"done":true');
    b.abort();
    await noTickets();
  });

  it("gpu-busy past the wait limit: 503 with Retry-After; a waiter that hangs up claims nothing", async () => {
    await harness();
    const { a, b } = await fillBothCards();
    const short = await h.extraProxy({ waitLimitS: 0.3, retryAfterS: 7 });
    const res = await fetch(`http://127.0.0.1:${short.port}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", ...only8b },
      body: JSON.stringify(chat("qwen3:8b", "need a GPU")),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("7");
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ reason: "gpu-busy", model: "qwen3:8b" });
    expect(body.waited_ms).toBeGreaterThanOrEqual(250);

    // A waiter that hangs up: nothing claimed, its wait demand cleared.
    const ctl = new AbortController();
    const waiting = post("/api/chat", chat("qwen3:8b", "need a GPU"), only8b, ctl.signal).catch((e) => e);
    await waitFor(async () => (await waitEntries()) > 0, 3000);
    ctl.abort();
    await waiting;
    await waitFor(async () => (await waitEntries()) === 0, 3000);
    await waitFor(() => h.proxy.inflight === 2, 3000); // only the two stalled calls
    expect((await h.tickets()).map((t) => t.modelName).sort()).toEqual(["qwen3:14b", "qwen3:32b"]);
    a.abort();
    b.abort();
    await noTickets();
  });
});

describe("proxy: provider failures", () => {
  it("a 500 before streaming is 502 provider-failure; the ticket is released as failed", async () => {
    await harness();
    h.emulator("rtx4090").setFaults([{ kind: "error", status: 500, path: "/api/chat", count: 1 }]);
    const res = await post("/api/chat", chat("qwen3:8b"));
    expect(res.status).toBe(502);
    expect(res.json()).toMatchObject({
      reason: "provider-failure",
      provider: "rtx4090",
      upstream_status: 500,
    });
    expect(res.headers.get("x-kubemoot-provider")).toBe("rtx4090");
    const ticket = res.headers.get("x-kubemoot-ticket") ?? "";
    await noTickets();
    expect(h.scheduler.attribute(ticket)).toMatchObject({ success: false });
  });

  it("connection refused is 502 provider-failure", async () => {
    await harness();
    h.emulator("rtx4090").setFaults([{ kind: "refuse" }]);
    const res = await post("/api/chat", chat("qwen3:8b", "x", { stream: false }));
    expect(res.status).toBe(502);
    expect(res.json()).toMatchObject({ reason: "provider-failure", error: expect.stringMatching(/refused/) });
    await noTickets();
  });

  it("a provider error after streaming began passes through as the final NDJSON line", async () => {
    await harness();
    h.emulator("rtx4090").setFaults([
      { kind: "error-mid-stream", afterTokens: 3, message: "runner crashed" },
    ]);
    const res = await post("/api/chat", chat("qwen3:8b"));
    expect(res.status).toBe(200);
    const lines = parseNdjson(res.text);
    expect(lines).toHaveLength(4);
    expect(lines.at(-1)).toEqual({ error: "runner crashed" });
    const ticket = res.headers.get("x-kubemoot-ticket") ?? "";
    await noTickets();
    expect(h.scheduler.attribute(ticket)).toMatchObject({ success: false, error: "runner crashed" });
  });

  it("a connection cut mid-stream ends with the proxy's own error line (NDJSON and SSE)", async () => {
    await harness();
    // Three tokens, a pause (so they reach the client), two more, then the connection is cut.
    h.emulator("rtx4090").setFaults([
      { kind: "stall", afterTokens: 3, ms: 3000, count: 2 },
      { kind: "drop", afterTokens: 5, count: 2 },
    ]);
    const res = await post("/api/generate", { model: "qwen3:8b", prompt: "hello" });
    expect(res.status).toBe(200);
    const lines = parseNdjson(res.text);
    expect(lines.slice(0, 3).every((l) => l.done === false)).toBe(true);
    expect(lines.at(-1)).toMatchObject({
      error: expect.stringMatching(/broke off/),
      reason: "provider-failure",
    });
    const sse = await post("/v1/chat/completions", { ...chat("qwen3:8b"), stream: true });
    expect(sse.status).toBe(200);
    const events = parseSse(sse.text);
    expect(events.at(-1)).toMatchObject({ error: { message: expect.stringMatching(/broke off/) } });
    await noTickets();
  });
});

describe("proxy: timeouts and long calls", () => {
  it("no answer within the timeout: 504 before streaming, a final error line after", async () => {
    await harness({ proxy: { timeoutMs: 300 } });
    h.emulator("rtx4090").setFaults([{ kind: "stall", model: "qwen3:8b", afterTokens: 0, count: 1 }]);
    const silent = await post("/api/chat", chat("qwen3:8b"));
    expect(silent.status).toBe(504);
    expect(silent.json()).toMatchObject({ reason: "timeout", provider: "rtx4090" });
    h.emulator("rtx4090").setFaults([{ kind: "stall", model: "qwen3:8b", afterTokens: 3, count: 1 }]);
    const cut = await post("/api/chat", chat("qwen3:8b"));
    expect(cut.status).toBe(200);
    const lines = parseNdjson(cut.text);
    expect(lines.at(-1)).toMatchObject({ error: expect.stringMatching(/did not finish within 300 ms/) });
    await noTickets();
    await waitFor(() => h.emulator("rtx4090").gpu().activeCount === 0, 3000);
  });

  it("renews the ticket's lease while a long answer streams", async () => {
    await harness({ env: { KUBEMOOT_TICKET_LEASE_SECONDS: "2" }, proxy: { renewEveryMs: 100 } });
    h.emulator("rtx4090").setFaults([{ kind: "stall", model: "qwen3:8b", afterTokens: 2 }]);
    const s = await openStream("/api/chat", chat("qwen3:8b"));
    const expiry = async () => [...(await h.state.tickets.allTickets()).values()].flat()[0]?.expiresAt ?? 0;
    const first = await expiry();
    expect(first).toBeGreaterThan(0);
    await waitFor(async () => (await expiry()) > first + 250, 3000);
    s.abort();
    await noTickets();
  });
});

describe("proxy: bad input", () => {
  it("garbage, wrong types, missing model and oversized bodies are 400 JSON errors; nothing is claimed", async () => {
    await harness({ proxy: { maxBodyBytes: 64 * 1024 } });
    const cases: Array<[string, unknown, RegExp]> = [
      ["/api/chat", "{not json", /invalid JSON/],
      ["/api/chat", "[1,2]", /JSON object/],
      ["/api/chat", { messages: [] }, /model: is required/],
      ["/api/chat", { model: 5 }, /model: expected a string/],
      ["/api/chat", { model: "qwen3:8b", stream: "yes" }, /stream: expected true or false/],
      ["/api/chat", { model: "qwen3:8b", messages: "hi" }, /messages: expected an array/],
      [
        "/api/chat",
        { model: "qwen3:8b", messages: [{ role: "user", content: 7 }] },
        /messages\[0\]\.content/,
      ],
      ["/api/chat", { model: "qwen3:8b", options: { num_ctx: "big" } }, /options\.num_ctx/],
      ["/api/chat", { model: "qwen3:8b", keep_alive: "3600" }, /keep_alive/],
      ["/api/generate", { model: "qwen3:8b", prompt: ["x"] }, /prompt: expected a string/],
      ["/v1/chat/completions", { model: "qwen3:8b", messages: [] }, /messages/],
      [
        "/v1/chat/completions",
        { model: "qwen3:8b", messages: [{ role: "user", content: "x" }], max_tokens: -1 },
        /max_tokens/,
      ],
      [
        "/api/chat",
        { model: "qwen3:8b", messages: [{ role: "user", content: "x".repeat(70 * 1024) }] },
        /larger than 65536 bytes/,
      ],
    ];
    for (const [path, body, message] of cases) {
      const res = await post(path, body);
      expect(res.status, `${path} ${String(body).slice(0, 60)}`).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(res.json()).toMatchObject({ reason: "bad-request", error: expect.stringMatching(message) });
    }
    const badHeaders: Array<Record<string, string>> = [
      { "x-kubemoot-phase": "bogus" },
      { "x-kubemoot-candidates": "not json" },
      { "x-kubemoot-agent": "no-slash" },
    ];
    for (const headers of badHeaders) {
      const res = await post("/api/chat", chat("qwen3:8b"), headers);
      expect(res.status).toBe(400);
      expect(res.json().reason).toBe("bad-request");
    }
    expect(await h.tickets()).toEqual([]);
    for (const e of h.emulators.values()) expect(e.gpu().runners).toEqual([]);
    // Still serving afterwards.
    expect((await post("/api/chat", chat("qwen3:8b", "ok", { stream: false }))).status).toBe(200);
    await noTickets();
  });

  it("an unknown model is 404; one too large for every GPU is 507", async () => {
    await harness();
    const unknown = await post("/api/chat", chat("llama9:900b"));
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({ reason: "model-not-found", model: "llama9:900b" });
    const big = await post("/api/chat", chat("qwen3:235b"));
    expect(big.status).toBe(507);
    expect(big.json()).toMatchObject({ reason: "model-too-large", model: "qwen3:235b" });
    await noTickets();
  });
});

describe("proxy: shutdown", () => {
  it("drain stops new calls, waits for the ones in flight; close aborts and releases the rest", async () => {
    await harness();
    h.emulator("rtx4090").setFaults([{ kind: "stall", model: "qwen3:8b", afterTokens: 2 }]);
    const s = await openStream("/api/chat", chat("qwen3:8b"));
    expect(h.proxy.inflight).toBe(1);
    expect(await h.proxy.drain(100)).toBe(false);
    const refused = await fetch(`${h.url}/api/chat`, {
      method: "POST",
      body: JSON.stringify(chat("qwen3:8b")),
    }).catch((e: unknown) => e);
    if (refused instanceof Response) expect(refused.status).toBe(503);
    await h.proxy.close(50);
    expect(h.proxy.inflight).toBe(0);
    expect(await s.rest).toMatch(/shutting down/);
    await noTickets();
  });
});
