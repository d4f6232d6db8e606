// The proxy over real HTTP, context length and num_ctx: two emulated GPUs (an RTX 5090 and an RTX
// 4090 with the qwen3 catalog), the provider publisher, an embedded memory state store, a
// Scheduler and the proxy (test/helpers/proxy-harness.ts). Each test gets a fresh harness so that
// no residency, ticket or learned ratio leaks between them.
import { afterEach, describe, expect, it } from "vitest";
import { chat, closeHarnesses, h, harness, noTickets, post } from "../../test/helpers/proxy-calls.js";
import type { CallRecord, TruncationReport } from "./options.js";

afterEach(closeHarnesses);

describe("proxy: context and num_ctx", () => {
  it("no silent truncation: a prompt larger than every context is 413 and never reaches a GPU", async () => {
    await harness();
    const res = await post("/api/chat", chat("qwen3:8b", "word ".repeat(40_000)));
    expect(res.status).toBe(413);
    expect(res.json()).toMatchObject({
      reason: "prompt-too-large",
      largest_context: 32768,
      // Refused on the generous count (200,000 chars / 5.25), which even so cannot fit.
      prompt_tokens: 38096,
      error: expect.stringMatching(/context/i),
    });
    for (const e of h.emulators.values()) {
      expect(e.gpu().runners).toEqual([]);
      expect(e.gpu().pending).toEqual([]);
    }
    // The OpenAI API answers it as OpenAI does: 400 context_length_exceeded.
    const oa = await post("/v1/chat/completions", chat("qwen3:8b", "word ".repeat(40_000)));
    expect(oa.status).toBe(400);
    expect(oa.json()).toMatchObject({
      error: { code: "context_length_exceeded", type: "invalid_request_error", largest_context: 32768 },
    });
    expect(oa.headers.get("x-kubemoot-reason")).toBe("prompt-too-large");
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
      // Even the generous count (150,000 chars / 5.25 = 28,572) plus the output exceeds 32768.
      chat("qwen3:8b", "word ".repeat(30_000), { options: { num_ctx: 65536, num_predict: 8000 } }),
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
