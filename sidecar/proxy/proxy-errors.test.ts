// The proxy over real HTTP when things go wrong: busy GPUs, disconnects, provider failures,
// timeouts, bad input and shutdown. Two emulated GPUs (an RTX 5090 and an RTX 4090 with the qwen3
// catalog), the provider publisher, an embedded memory state store, a Scheduler and the proxy
// (test/helpers/proxy-harness.ts). Each test gets a fresh harness so that no residency, ticket or
// learned ratio leaks between them.
import { afterEach, describe, expect, it } from "vitest";
import { parseNdjson, parseSse, waitFor } from "../../test/helpers/emulator-http.js";
import {
  chat,
  closeHarnesses,
  h,
  harness,
  noTickets,
  openStream,
  post,
  waitEntries,
} from "../../test/helpers/proxy-calls.js";

afterEach(closeHarnesses);

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

  it("connection refused: the call is placed again elsewhere; with nowhere left, 503 provider-unavailable", async () => {
    await harness();
    h.emulator("rtx4090").setFaults([{ kind: "refuse" }]);
    const res = await post("/api/chat", chat("qwen3:8b", "x", { stream: false }));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-kubemoot-provider")).toBe("rtx5090");
    h.emulator("rtx5090").setFaults([{ kind: "refuse" }]);
    const none = await post("/api/chat", chat("qwen3:8b", "y", { stream: false }));
    expect(none.status).toBe(503);
    expect(none.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(none.json()).toMatchObject({ reason: "provider-unavailable" });
    await noTickets();
  });

  it("connection refused on both of its placements is 502 provider-failure", async () => {
    await harness();
    for (const e of h.emulators.values()) e.setFaults([{ kind: "refuse" }]);
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
    for (const e of h.emulators.values()) {
      e.setFaults([
        { kind: "stall", afterTokens: 3, ms: 3000, count: 2 },
        { kind: "drop", afterTokens: 5, count: 2 },
      ]);
    }
    const res = await post("/api/generate", { model: "qwen3:8b", prompt: "hello" });
    expect(res.status).toBe(200);
    const cutAt = res.headers.get("x-kubemoot-provider");
    const lines = parseNdjson(res.text);
    expect(lines.slice(0, 3).every((l) => l.done === false)).toBe(true);
    expect(lines.at(-1)).toMatchObject({
      error: expect.stringMatching(/broke off/),
      reason: "provider-failure",
    });
    // A reset connection makes its provider suspect: the next call goes to the other card.
    const sse = await post("/v1/chat/completions", { ...chat("qwen3:8b"), stream: true });
    expect(sse.status).toBe(200);
    expect(sse.headers.get("x-kubemoot-provider")).not.toBe(cutAt);
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
  it("garbage, wrong types and missing model are 400 JSON errors, oversized bodies 413; nothing is claimed", async () => {
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
    ];
    for (const [path, body, message] of cases) {
      const res = await post(path, body);
      expect(res.status, `${path} ${String(body).slice(0, 60)}`).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/json");
      // Each API's own shape: Ollama's {"error": "..."}, OpenAI's {"error": {"message", ...}}.
      const answer = res.json();
      if (path.startsWith("/v1/")) {
        expect(answer).toMatchObject({
          error: {
            message: expect.stringMatching(message),
            type: "invalid_request_error",
            code: "bad_request",
          },
        });
      } else expect(answer).toMatchObject({ reason: "bad-request", error: expect.stringMatching(message) });
      expect(res.headers.get("x-kubemoot-reason")).toBe("bad-request");
    }
    const big = await post("/api/chat", {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "x".repeat(70 * 1024) }],
    });
    expect(big.status).toBe(413);
    expect(big.json()).toMatchObject({
      reason: "body-too-large",
      error: expect.stringMatching(/larger than 65536 bytes/),
    });
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
