// The proxy over real HTTP, the Ollama and OpenAI APIs: two emulated GPUs (an RTX 5090 and an RTX
// 4090 with the qwen3 catalog), the provider publisher, an embedded memory state store, a
// Scheduler and the proxy (test/helpers/proxy-harness.ts). Each test gets a fresh harness so that
// no residency, ticket or learned ratio leaks between them.
import { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { parseNdjson, parseSse } from "../../test/helpers/emulator-http.js";
import { chat, closeHarnesses, h, harness, noTickets, post } from "../../test/helpers/proxy-calls.js";

afterEach(closeHarnesses);

describe("proxy: Ollama and OpenAI APIs", () => {
  it("/api/chat streams NDJSON through the placed provider, with attribution headers", async () => {
    await harness();
    const res = await post("/api/chat", chat("qwen3:8b"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    // 8b goes to the small card (docs/rules/placement.md §4 worked example).
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
    // The release carried the engine's count: attribution has it. A short prompt's count is
    // mostly template, so the ratio is not learned from it; a long prompt's is.
    const a = h.scheduler.attribute(ticket);
    expect(a).toMatchObject({ success: true, promptTokens: last.prompt_eval_count, truncated: false });
    expect(h.scheduler.estimatePromptTokens(0, 3500)).toBe(1000);
    const long = await post("/api/chat", chat("qwen3:8b", "word ".repeat(400), { stream: false }));
    expect(long.status).toBe(200);
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
      "x-kubemoot-agent": "crew/tooler", // the harness sidecar's own agent
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
