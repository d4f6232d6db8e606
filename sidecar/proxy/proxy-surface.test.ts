// The rest of the inference surface through the proxy, with the official clients (openai and
// ollama npm) over real HTTP: errors in each API's own shape, model management answered by the
// proxy, GET /v1/models/{id}, and the OpenAI routes a provider may not serve. Two emulated GPUs,
// the provider publisher, an embedded memory state store, a Scheduler and the proxy
// (test/helpers/proxy-harness.ts); a fresh harness per test.
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { chat, closeHarnesses, h, harness, noTickets, post } from "../../test/helpers/proxy-calls.js";
import type { CallRecord } from "./options.js";

afterEach(closeHarnesses);

const openai = () => new OpenAI({ baseURL: `${h.url}/v1`, apiKey: "unused", maxRetries: 0 });
const ollama = () => new Ollama({ host: h.url });

/** The rejection of `p` (fails the test when `p` resolves). */
async function rejection(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe("proxy: OpenAI errors in OpenAI's shape", () => {
  it("unknown model → NotFoundError model_not_found; the reason header stays", async () => {
    await harness();
    const err = await rejection(
      openai().chat.completions.create({ model: "llama9:900b", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.status).toBe(404);
    expect(err.code).toBe("model_not_found");
    expect(err.type).toBe("invalid_request_error");
    expect(err.message).toContain("llama9:900b");
    expect(err.headers?.get("x-kubemoot-reason")).toBe("model-not-found");
  });

  it("a prompt no context holds → BadRequestError context_length_exceeded; nothing claimed", async () => {
    const records: CallRecord[] = [];
    await harness({ hooks: { onCall: (r) => records.push(r) } });
    const err = await rejection(
      openai().chat.completions.create({
        model: "qwen3:8b",
        messages: [{ role: "user", content: "word ".repeat(200_000) }],
      }),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.code).toBe("context_length_exceeded");
    expect(err.type).toBe("invalid_request_error");
    expect(err.headers?.get("x-kubemoot-reason")).toBe("prompt-too-large");
    // The call record (and so the metrics) says what went on the wire.
    expect(records.map((r) => [r.status, r.reason])).toEqual([[400, "prompt-too-large"]]);
    await noTickets();
  });

  it("a bad field → BadRequestError naming it in param", async () => {
    await harness();
    const err = await rejection(openai().chat.completions.create({ model: "qwen3:8b", messages: [] }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe("messages");
    expect(err.code).toBe("bad_request");
    expect(err.type).toBe("invalid_request_error");
  });

  it("no reachable GPU → 503 with Retry-After, typed by status", async () => {
    await harness();
    h.emulator("rtx4090").setFaults([{ kind: "refuse" }]);
    h.emulator("rtx5090").setFaults([{ kind: "refuse" }]);
    const first = await rejection(
      openai().chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: "a" }] }),
    );
    // The first call finds both refusing (502); then no GPU is reachable at all: 503 at once.
    expect([502, 503]).toContain(first.status);
    const err = await rejection(
      openai().chat.completions.create({ model: "qwen3:8b", messages: [{ role: "user", content: "b" }] }),
    );
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.status).toBe(503);
    expect(err.code).toBe("provider_unavailable");
    expect(err.type).toBe("server_error");
    expect(err.headers?.get("retry-after")).toMatch(/^\d+$/);
    await noTickets();
  });

  it("the Ollama routes keep Ollama's {error: string}", async () => {
    await harness();
    const res = await post("/api/chat", chat("llama9:900b"));
    expect(res.status).toBe(404);
    expect(typeof res.json().error).toBe("string");
    expect(res.headers.get("x-kubemoot-reason")).toBe("model-not-found");
    const unknownV1 = await fetch(`${h.url}/v1/nope`);
    expect(unknownV1.status).toBe(404);
    expect(((await unknownV1.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});

describe("proxy: the OpenAI model catalog", () => {
  it("models.list and models.retrieve; an unknown id is NotFoundError model_not_found", async () => {
    await harness();
    const client = openai();
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toContain("qwen3:8b");
    const one = await client.models.retrieve("qwen3:8b");
    expect(one).toMatchObject({ id: "qwen3:8b", object: "model", owned_by: "library" });
    // Names are normalised as Ollama does ("m" is "m:latest"), so ids with a tag are exact.
    expect((await client.models.retrieve("qwen3:14b")).id).toBe("qwen3:14b");
    const err = await rejection(client.models.retrieve("nope:1b"));
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.code).toBe("model_not_found");
  });
});

describe("proxy: OpenAI routes a provider does not serve", () => {
  it("/v1/responses is placed and forwarded; the engine's 404 becomes an OpenAI 404 naming route and provider", async () => {
    await harness();
    const res = await post("/v1/responses", { model: "qwen3:8b", input: "hello" });
    expect(res.status).toBe(404);
    expect(res.headers.get("x-kubemoot-reason")).toBe("route-not-served");
    const provider = res.headers.get("x-kubemoot-provider") ?? "";
    expect(provider).not.toBe("");
    const body = res.json() as { error: { message: string; code: string; type: string } };
    expect(body.error.code).toBe("route_not_served");
    expect(body.error.message).toContain("/v1/responses");
    expect(body.error.message).toContain(provider);
    await noTickets();
    // Not the provider's fault: released as not run, so its health is untouched and the
    // next call goes to the same GPU.
    const ticket = res.headers.get("x-kubemoot-ticket") ?? "";
    expect(h.scheduler.attribute(ticket)?.error).toContain("/v1/responses");
    const ok = await post("/api/chat", chat("qwen3:8b", "hi", { stream: false }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-kubemoot-provider")).toBe(provider);
  });

  it("/v1/completions (stream or not) is placed, ticketed and released like chat", async () => {
    await harness();
    const whole = await post("/v1/completions", { model: "qwen3:8b", prompt: "Once upon", max_tokens: 5 });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("x-kubemoot-ticket")).toMatch(/./);
    expect(whole.headers.get("x-kubemoot-model")).toBe("qwen3:8b");
    expect(whole.json()).toMatchObject({
      object: "text_completion",
      usage: { prompt_tokens: expect.any(Number) },
    });
    const streamed = await post("/v1/completions", {
      model: "qwen3:8b",
      prompt: "Again",
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    expect(streamed.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(streamed.text).toContain('"completion_tokens"');
    await noTickets();
  });

  it("responses.create through the openai client raises NotFoundError when the engine lacks the route", async () => {
    await harness();
    const err = await rejection(openai().responses.create({ model: "qwen3:8b", input: "hello" }));
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.code).toBe("route_not_served");
    expect(err.message).toContain("/v1/responses");
    expect(err.headers?.get("x-kubemoot-provider")).toMatch(/^rtx/);
  });

  it("bad /v1/completions and /v1/responses bodies are 400 naming the field", async () => {
    await harness();
    const c = await post("/v1/completions", { model: "qwen3:8b", prompt: 42 });
    expect(c.status).toBe(400);
    expect(c.json()).toMatchObject({ error: { param: "prompt", type: "invalid_request_error" } });
    const r = await post("/v1/responses", { model: "qwen3:8b", input: [{ role: "user", content: 7 }] });
    expect(r.status).toBe(400);
    expect(r.json()).toMatchObject({ error: { param: "input[0].content" } });
    await noTickets();
  });
});

describe("proxy: model management is the operator's", () => {
  it("pull, delete, copy, create and push raise 403 naming the operator and the doc", async () => {
    await harness();
    const client = ollama();
    const attempts: Array<[string, () => Promise<unknown>]> = [
      ["pull", () => client.pull({ model: "qwen3:8b" })],
      ["delete", () => client.delete({ model: "qwen3:8b" })],
      ["copy", () => client.copy({ source: "qwen3:8b", destination: "mine:latest" })],
      ["create", () => client.create({ model: "mine:latest", from: "qwen3:8b" })],
      ["push", () => client.push({ model: "qwen3:8b" })],
    ];
    for (const [name, call] of attempts) {
      const err = (await call().then(
        () => undefined,
        (e: unknown) => e,
      )) as { status_code?: number; error?: string } | undefined;
      expect(err, name).toBeDefined();
      expect(err?.status_code, name).toBe(403);
      expect(err?.error, name).toMatch(/managed by the Kubemoot operator/);
      expect(err?.error, name).toContain("Model and ModelProvider");
      expect(err?.error, name).toContain("docs/deploy.md");
    }
    // Nothing was forwarded: the model is still on both GPUs' disks and nothing is claimed.
    expect((await client.list()).models.map((m) => m.name)).toContain("qwen3:8b");
    await noTickets();
  });
});
