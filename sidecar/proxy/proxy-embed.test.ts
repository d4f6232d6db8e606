// Embeddings through the proxy, with the official clients over real HTTP: /api/embed,
// /api/embeddings (legacy) and /v1/embeddings are placed, ticketed, attributed and released
// like chat calls, and every input of a batch is checked against the placed context. Two
// emulated GPUs serving the qwen3 catalog and nomic-embed-text (768 dimensions, trained
// context 2048), the provider publisher, an embedded memory store, a Scheduler and the proxy.
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { closeHarnesses, h, harness, noTickets, post } from "../../test/helpers/proxy-calls.js";
import { type HarnessProvider, HOMELAB } from "../../test/helpers/proxy-harness.js";

afterEach(closeHarnesses);

const EMBEDDER = "nomic-embed-text:latest";
const WITH_EMBEDDER: HarnessProvider[] = HOMELAB.map((p) => ({
  ...p,
  models: { ...(p.models as Record<string, number>), "nomic-embed-text": 262 },
}));

const openai = () => new OpenAI({ baseURL: `${h.url}/v1`, apiKey: "unused", maxRetries: 0 });
const ollama = () => new Ollama({ host: h.url });
/** About 3000 tokens: more than nomic-embed-text's 2048-token context. */
const LONG = "word ".repeat(3000);

describe("proxy: embeddings are placed like chat calls", () => {
  it("/api/embed: a batch placed, attributed and released; the engine's count is learned", async () => {
    await harness({ providers: WITH_EMBEDDER });
    const res = await post("/api/embed", { model: "nomic-embed-text", input: ["alpha beta", "gamma"] });
    expect(res.status).toBe(200);
    const provider = res.headers.get("x-kubemoot-provider") ?? "";
    expect(provider).toMatch(/^rtx/);
    expect(res.headers.get("x-kubemoot-model")).toBe(EMBEDDER);
    expect(res.headers.get("x-kubemoot-cold-load")).toBe("true");
    const ticket = res.headers.get("x-kubemoot-ticket") ?? "";
    const body = res.json() as { embeddings: number[][]; prompt_eval_count: number };
    expect(body.embeddings).toHaveLength(2);
    expect(body.embeddings[0]).toHaveLength(768);
    await noTickets();
    expect(h.scheduler.attribute(ticket)).toMatchObject({
      success: true,
      promptTokens: body.prompt_eval_count,
      truncated: false,
    });
    expect(
      h
        .emulator(provider)
        .gpu()
        .runners.map((r) => r.model),
    ).toEqual([EMBEDDER]);
    // The official client: same vectors, warm this time.
    const again = await ollama().embed({ model: "nomic-embed-text", input: ["alpha beta", "gamma"] });
    expect(again.embeddings).toEqual(body.embeddings);
    await noTickets();
  });

  it("/api/embeddings (legacy) and /v1/embeddings through the official clients", async () => {
    await harness({ providers: WITH_EMBEDDER });
    const legacy = await ollama().embeddings({ model: "nomic-embed-text", prompt: "alpha beta" });
    expect(legacy.embedding).toHaveLength(768);
    // The openai client asks for base64 and decodes it.
    const oa = await openai().embeddings.create({
      model: "nomic-embed-text",
      input: ["alpha beta", "gamma"],
    });
    expect(oa.data.map((d) => d.index)).toEqual([0, 1]);
    expect(oa.data[0]?.embedding).toHaveLength(768);
    expect(oa.usage.prompt_tokens).toBeGreaterThan(0);
    for (const [a, b] of (oa.data[0]?.embedding ?? []).map((v, i) => [v, legacy.embedding[i] ?? 0])) {
      expect(a).toBeCloseTo(b as number, 5);
    }
    await noTickets();
  });

  it("each input of a batch must fit the context: the over-long one is refused by name", async () => {
    await harness({ providers: WITH_EMBEDDER });
    // Warm: the published state then carries the context the copy was loaded with (2048).
    expect((await post("/api/embed", { model: "nomic-embed-text", input: "warm" })).status).toBe(200);
    await h.publisher.probeNow();
    const embed = await post("/api/embed", { model: "nomic-embed-text", input: ["short", LONG] });
    expect(embed.status).toBe(413);
    expect(embed.json()).toMatchObject({
      reason: "prompt-too-large",
      field: "input[1]",
      largest_context: 2048,
    });
    expect(embed.headers.get("x-kubemoot-reason")).toBe("prompt-too-large");
    const err = await openai()
      .embeddings.create({ model: "nomic-embed-text", input: ["short", LONG] })
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err?.code).toBe("context_length_exceeded");
    expect(err?.param).toBe("input[1]");
    const legacy = await post("/api/embeddings", { model: "nomic-embed-text", prompt: LONG });
    expect(legacy.status).toBe(413);
    expect(legacy.json()).toMatchObject({ field: "prompt" });
    await noTickets();
  });

  it("cold, the engine is asked not to cut: an over-long input is an error, never a silent cut", async () => {
    await harness({ providers: WITH_EMBEDDER });
    const res = await post("/api/embed", { model: "nomic-embed-text", input: LONG });
    expect(res.status).toBe(400);
    expect(res.json().error).toMatch(/context length/);
    await noTickets();
    // A caller that asks for truncation gets it.
    const cut = await post("/api/embed", { model: "nomic-embed-text", input: LONG, truncate: true });
    expect(cut.status).toBe(200);
    await noTickets();
  });

  it("a chat model asked to embed is the caller's 400; an unload is answered, not forwarded", async () => {
    await harness({ providers: WITH_EMBEDDER });
    const res = await post("/api/embed", { model: "qwen3:8b", input: "x" });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ reason: "bad-request", error: expect.stringMatching(/embeddings/) });
    expect(res.headers.get("x-kubemoot-provider")).toMatch(/^rtx/);
    await noTickets();
    const unload = await post("/api/embed", { model: "nomic-embed-text", keep_alive: 0 });
    expect(unload.status).toBe(200);
    expect(unload.json()).toMatchObject({ model: EMBEDDER, embeddings: [] });
    expect(unload.headers.get("x-kubemoot-ticket")).toBeNull();
  });

  it("bad embedding bodies are 400 naming the field; nothing is claimed", async () => {
    await harness({ providers: WITH_EMBEDDER });
    const a = await post("/api/embed", { model: "nomic-embed-text", input: ["ok", 7] });
    expect(a.status).toBe(400);
    expect(a.json()).toMatchObject({ reason: "bad-request", field: "input[1]" });
    const b = await post("/v1/embeddings", { model: "nomic-embed-text" });
    expect(b.status).toBe(400);
    expect(b.json()).toMatchObject({ error: { param: "input", type: "invalid_request_error" } });
    const c = await post("/api/embeddings", { model: "nomic-embed-text", prompt: ["x"] });
    expect(c.status).toBe(400);
    expect(c.json()).toMatchObject({ field: "prompt" });
    expect(await h.tickets()).toEqual([]);
  });
});
