// Issue 17, endpoint allowlist, in depth: the proxy's own HTTP client refuses an origin outside
// KUBEMOOT_PROVIDER_ENDPOINTS even when the state it decided on was not filtered (here the
// harness's state store has no filter, as if the first layer had a bug). Emulated GPUs over real
// HTTP (test/helpers/proxy-harness.ts); nothing may reach them, and no ticket is left behind.
import { afterEach, describe, expect, it } from "vitest";
import { chat, closeHarnesses, h, harness, noTickets, post } from "../helpers/proxy-calls.js";

afterEach(closeHarnesses);

describe("proxy: never forwards to an endpoint outside the allowlist", () => {
  it("answers 502 without sending anything, for calls and /api/show", async () => {
    await harness({ env: { KUBEMOOT_PROVIDER_ENDPOINTS: "10.0.0.0/8,*.gpu.svc.cluster.local:11434" } });
    for (const path of ["/api/chat", "/api/generate", "/v1/chat/completions"]) {
      const body =
        path === "/api/generate" ? { model: "qwen3:8b", prompt: "secret" } : chat("qwen3:8b", "secret");
      const r = await post(path, { ...body, stream: false });
      expect(r.status, path).toBe(502);
      expect(r.text).toMatch(/not in KUBEMOOT_PROVIDER_ENDPOINTS/);
    }
    expect((await post("/api/show", { model: "qwen3:8b" })).status).toBe(502);
    // Nothing reached the GPUs: no model loaded, no request seen.
    for (const name of ["rtx5090", "rtx4090"]) {
      const s = h.emulator(name).state();
      expect(s.models.map((m) => m.name)).toEqual([]);
      expect(s.activeCount + s.queueDepth).toBe(0);
    }
    await noTickets();
  });

  it("still forwards to an allowed endpoint", async () => {
    await harness({ env: { KUBEMOOT_PROVIDER_ENDPOINTS: "127.0.0.1" } });
    const r = await post("/api/chat", { ...chat("qwen3:8b"), stream: false });
    expect(r.status).toBe(200);
    await noTickets();
  });

  it("a static binding outside the list is never the fallback of a call that cannot wait", async () => {
    const place = () =>
      h.scheduler.place({
        agent: "crew/tooler",
        threadId: "t1",
        phase: "mulling",
        candidates: [{ model: "qwen3:235b", score: 80 }], // fits no card: refused
        promptTokens: 10,
        promptChars: 40,
        maxOutputTokens: 100,
        cannotWait: true,
      });
    const staticEnv = { KUBEMOOT_MODEL_MODEL: "qwen3:235b", KUBEMOOT_MODEL_ENDPOINT: "http://127.0.0.1:1" };
    await harness({ env: { ...staticEnv, KUBEMOOT_PROVIDER_ENDPOINTS: "10.0.0.0/8" } });
    expect((await place()).kind).toBe("refused");
    await closeHarnesses();
    // Control: the same binding inside the list is used.
    await harness({ env: { ...staticEnv, KUBEMOOT_PROVIDER_ENDPOINTS: "127.0.0.1:1" } });
    const placed = await place();
    expect(placed.kind).toBe("placed");
    expect(placed.kind === "placed" && placed.placement.endpoint).toBe("http://127.0.0.1:1");
  });
});
