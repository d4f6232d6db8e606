// The proxy over real HTTP, bad input and shutdown: two emulated GPUs (an RTX 5090 and an RTX
// 4090 with the qwen3 catalog), the provider publisher, an embedded memory state store, a
// Scheduler and the proxy (test/helpers/proxy-harness.ts). Each test gets a fresh harness so that
// no residency, ticket or learned ratio leaks between them.
import { afterEach, describe, expect, it } from "vitest";
import {
  chat,
  closeHarnesses,
  h,
  harness,
  noTickets,
  openStream,
  post,
} from "../../test/helpers/proxy-calls.js";

afterEach(closeHarnesses);

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
