import { type OpenMetricsContentType, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createGenAiMetrics } from "./genai-metrics.js";
import type { CallRecord } from "./options.js";

function call(over: Partial<CallRecord> = {}): CallRecord {
  return {
    api: "chat",
    requestedModel: "qwen3:8b",
    stream: true,
    status: 200,
    reason: undefined,
    ticketId: "t1",
    provider: "card",
    model: "qwen3:8b",
    coldLoad: false,
    evicted: [],
    queueWaitMs: 0,
    latencyMs: 800,
    durationMs: 1000,
    ttfbMs: 100,
    estimatedPromptTokens: 40,
    promptTokens: 37,
    cachedPromptTokens: 0,
    outputTokens: 12,
    truncated: false,
    numCtx: undefined,
    engine: "vllm",
    ...over,
  };
}

/** The value of one series line, e.g. `name_bucket{...,le="0.32"}`. */
function series(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.indexOf("}"));
    const have = inner.split(",");
    if (want.every((w) => have.includes(w))) return Number(line.slice(line.indexOf("}") + 2).split(" ")[0]);
  }
  return undefined;
}

const PLACED = {
  gen_ai_operation_name: "chat",
  gen_ai_provider_name: "vllm",
  gen_ai_request_model: "qwen3:8b",
  gen_ai_response_model: "qwen3:8b",
};

describe("GenAI client metrics", () => {
  it("observe a call's duration, its tokens by type and a stream's first chunk, under the convention's names", async () => {
    const registry = new Registry();
    const observe = createGenAiMetrics(registry);
    observe(call({ queueWaitMs: 150, durationMs: 1000, latencyMs: 800, ttfbMs: 100 }));
    const text = await registry.metrics();
    const d = "gen_ai_client_operation_duration_seconds";
    expect(series(text, `${d}_count`, { ...PLACED, error_type: "" })).toBe(1);
    expect(series(text, `${d}_sum`, PLACED)).toBeCloseTo(1.0);
    expect(series(text, `${d}_bucket`, { ...PLACED, le: "0.64" })).toBe(0);
    expect(series(text, `${d}_bucket`, { ...PLACED, le: "1.28" })).toBe(1);
    const t = "gen_ai_client_token_usage";
    expect(series(text, `${t}_sum`, { ...PLACED, gen_ai_token_type: "input" })).toBe(37);
    expect(series(text, `${t}_sum`, { ...PLACED, gen_ai_token_type: "output" })).toBe(12);
    // Waiting and placing (1000 − 800 ms) and the forward's first byte (100 ms).
    expect(series(text, "gen_ai_client_operation_time_to_first_chunk_seconds_sum", PLACED)).toBeCloseTo(0.3);
  });

  it("leaves the first chunk out for a call that is not streamed, and tokens no engine reported", async () => {
    const registry = new Registry();
    createGenAiMetrics(registry)(call({ stream: false, promptTokens: 0 }));
    const text = await registry.metrics();
    expect(series(text, "gen_ai_client_operation_time_to_first_chunk_seconds_count", PLACED)).toBeUndefined();
    expect(series(text, "gen_ai_client_token_usage_count", { gen_ai_token_type: "input" })).toBeUndefined();
    expect(series(text, "gen_ai_client_token_usage_count", { gen_ai_token_type: "output" })).toBe(1);
  });

  it("labels a failure with its reason, and never a name no catalog knew", async () => {
    const registry = new Registry();
    const observe = createGenAiMetrics(registry);
    const unplaced = { ticketId: "", provider: "", model: "", promptTokens: 0, outputTokens: 0, ttfbMs: 0 };
    observe(call({ ...unplaced, status: 503, reason: "gpu-busy" }));
    observe(call({ ...unplaced, status: 404, reason: "model-not-found", requestedModel: "made-up:1b" }));
    // Answered 200, then the client left before the end.
    observe(call({ reason: "client-gone" }));
    const text = await registry.metrics();
    const count = "gen_ai_client_operation_duration_seconds_count";
    expect(series(text, count, { gen_ai_request_model: "qwen3:8b", error_type: "gpu-busy" })).toBe(1);
    expect(series(text, count, { gen_ai_request_model: "_OTHER", error_type: "model-not-found" })).toBe(1);
    expect(series(text, count, { ...PLACED, error_type: "client-gone" })).toBe(1);
    expect(text).not.toContain("made-up");
  });

  it("carries the call's trace as an exemplar when the registry speaks OpenMetrics", async () => {
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const spanId = "b7ad6b7169203331";
    createGenAiMetrics(registry)(call({ traceId, spanId }));
    const text = await registry.metrics();
    const bucket = text
      .split("\n")
      .find(
        (l) => l.startsWith("gen_ai_client_operation_duration_seconds_bucket{") && l.includes('le="1.28"'),
      );
    expect(bucket).toContain(`# {trace_id="${traceId}",span_id="${spanId}"} 1`);
  });

  it("carries no exemplar in the Prometheus text format", async () => {
    const registry = new Registry();
    createGenAiMetrics(registry)(
      call({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" }),
    );
    expect(await registry.metrics()).not.toContain("trace_id");
  });
});
