// Traces from agent call to engine (docs/tracing.md, issue 34): a sidecar process with
// OTEL_EXPORTER_OTLP_ENDPOINT pointed at a local OTLP/HTTP receiver (test/helpers/otlp-receiver.ts,
// protobuf decoded with OpenTelemetry's proto definitions), an emulated Ollama card that records
// the trace context it receives. Asserted: the span tree (one trace id, parentage), the GenAI
// and placement attributes, the propagated `traceparent` the engine saw, and that a malformed
// incoming `traceparent` starts a new trace without failing the call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";
import { type SchedulerClient, schedulerClient } from "../helpers/grpc-client.js";
import { OtlpReceiver, oneSpan, randomHex } from "../helpers/otlp-receiver.js";
import { memorySidecarArgs, type SidecarProcess, startSidecarProcess } from "../helpers/sidecar-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const MODEL = "qwen3:8b";
const SERVER = 2;
const CLIENT = 3;
let receiver: OtlpReceiver;
let card: EmulatorHandle;
let sidecar: SidecarProcess;
let client: SchedulerClient;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  card = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    models: { [MODEL]: 4863, "qwen3:14b": 9000 },
    contextLength: 4096,
    numParallel: 2,
    timeScale: 0.02,
    outputTokens: 12,
  });
  sidecar = await startSidecarProcess(
    memorySidecarArgs("--provider", `card=${card.url},vram=24563,context=4096,parallel=2`),
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "sidecar-under-test",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
  );
  client = schedulerClient(sidecar.apiAddress);
}, 30_000);

afterAll(async () => {
  client?.close();
  await sidecar?.stop();
  await card?.close();
  await receiver?.close();
});

describe("traces of proxied calls", () => {
  it("continue the caller's trace through placement to the engine, with the GenAI attributes", async () => {
    const traceId = randomHex(32);
    const parent = randomHex(16);
    const res = await fetch(`http://${sidecar.proxyAddress}/api/chat`, {
      method: "POST",
      headers: { traceparent: `00-${traceId}-${parent}-01`, tracestate: "vendor=1" },
      body: JSON.stringify({
        model: MODEL,
        stream: true,
        messages: [{ role: "user", content: "secret prompt" }],
      }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const spans = await receiver.traceWith(traceId, [`chat ${MODEL}`, "kubemoot.place", "POST"]);
    const call = oneSpan(spans, `chat ${MODEL}`);
    const place = oneSpan(spans, "kubemoot.place");
    const engine = oneSpan(spans, "POST");
    expect(call.service).toBe("sidecar-under-test");
    expect(call.kind).toBe(SERVER);
    expect(call.parentSpanId).toBe(parent);
    expect(place.parentSpanId).toBe(call.spanId);
    expect(engine.parentSpanId).toBe(call.spanId);
    expect(engine.kind).toBe(CLIENT);
    expect(call.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "ollama",
      "gen_ai.request.model": MODEL,
      "gen_ai.response.model": MODEL,
      "gen_ai.request.stream": true,
      "kubemoot.place.provider": "card",
    });
    expect(call.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    expect(call.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    expect(call.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
    expect(call.attributes["kubemoot.ttft_s"]).toBeGreaterThan(0);
    expect(call.events.map((e) => e.name)).toContain("gen_ai.first_chunk");
    expect(place.attributes).toMatchObject({
      "kubemoot.place.provider": "card",
      "kubemoot.place.model": MODEL,
      "kubemoot.place.engine": "ollama",
      "kubemoot.place.policy": "time",
    });
    expect(typeof place.attributes["kubemoot.place.cold"]).toBe("boolean");
    expect(place.attributes["kubemoot.place.expected_s"]).toBeGreaterThan(0);
    expect(place.attributes["kubemoot.place.ticket_id"]).toBe(call.attributes["kubemoot.place.ticket_id"]);
    expect(engine.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.response.status_code": 200,
      "server.address": "127.0.0.1",
    });
    // The engine received the engine span's context, the caller's tracestate with it.
    const seen = (await (await fetch(`${card.url}/_emulator/traces`)).json()) as {
      traces: { traceparent: string; tracestate?: string }[];
    };
    const got = seen.traces.find((t) => t.traceparent.includes(traceId));
    expect(got?.traceparent).toBe(`00-${traceId}-${engine.spanId}-01`);
    expect(got?.tracestate).toBe("vendor=1");
    // Never the prompt.
    expect(JSON.stringify(spans)).not.toContain("secret prompt");
  });

  it("records a refusal on the placement span and an error on the call's", async () => {
    const traceId = randomHex(32);
    const res = await fetch(`http://${sidecar.proxyAddress}/api/chat`, {
      method: "POST",
      headers: { traceparent: `00-${traceId}-${randomHex(16)}-01` },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "word ".repeat(40_000) }] }),
    });
    expect(res.status).toBe(413);
    const spans = await receiver.traceWith(traceId, [`chat ${MODEL}`, "kubemoot.place"]);
    const call = oneSpan(spans, `chat ${MODEL}`);
    expect(call.status).toBe(2);
    expect(call.attributes["error.type"]).toBe("prompt-too-large");
    expect(oneSpan(spans, "kubemoot.place").attributes["kubemoot.place.refusal_reason"]).toBe(
      "prompt-too-large",
    );
    expect(spans.some((s) => s.name === "POST")).toBe(false);
  });

  it("starts a new trace for a malformed traceparent, and the call succeeds", async () => {
    const before = new Set(receiver.spans.map((s) => s.traceId));
    const res = await fetch(`http://${sidecar.proxyAddress}/api/chat`, {
      method: "POST",
      headers: { traceparent: "00-not-a-trace-context-01" },
      body: JSON.stringify({ model: MODEL, stream: false, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await waitUntil(
      () => receiver.spans.some((s) => s.name === `chat ${MODEL}` && !before.has(s.traceId)),
      10_000,
      "the call's span in a new trace",
    );
    const call = receiver.spans.find((s) => s.name === `chat ${MODEL}` && !before.has(s.traceId))!;
    expect(call.parentSpanId).toBe("");
    expect(call.attributes["gen_ai.request.stream"]).toBe(false);
  });

  it("links the GenAI latency histograms to the call's trace by OpenMetrics exemplars", async () => {
    const traceId = randomHex(32);
    const res = await fetch(`http://${sidecar.proxyAddress}/api/chat`, {
      method: "POST",
      headers: { traceparent: `00-${traceId}-${randomHex(16)}-01` },
      body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const call = oneSpan(await receiver.traceWith(traceId, [`chat ${MODEL}`]), `chat ${MODEL}`);
    const scrape = await fetch(`http://${sidecar.apiAddress}/metrics`);
    expect(scrape.headers.get("content-type")).toMatch(/^application\/openmetrics-text/);
    const text = await scrape.text();
    expect(text.trimEnd().endsWith("# EOF")).toBe(true);
    const exemplar = `# {trace_id="${traceId}",span_id="${call.spanId}"}`;
    for (const name of [
      "gen_ai_client_operation_duration_seconds_bucket",
      "gen_ai_client_operation_time_to_first_chunk_seconds_bucket",
      "gen_ai_client_token_usage_bucket",
    ]) {
      expect(
        text.split("\n").some((l) => l.startsWith(`${name}{`) && l.includes(exemplar)),
        name,
      ).toBe(true);
    }
    // The sidecar's own counters keep their names in OpenMetrics.
    expect(text).toMatch(/^kubemoot_proxy_calls_total\{/m);
  });

  it("gives Place an RPC span whose child is the placement", async () => {
    const traceId = randomHex(32);
    const parent = randomHex(16);
    const r = await client.callWithMetadata(
      "Place",
      { agent: "team/agent", threadId: "t1", candidates: [{ model: MODEL, score: 90 }] },
      {
        traceparent: `00-${traceId}-${parent}-01`,
      },
    );
    expect(r.placement?.ticketId).toBeTruthy();
    await client.call("Release", { ticketId: r.placement.ticketId, outcome: "CALL_OUTCOME_UNSPECIFIED" });
    const name = "kubemoot.scheduler.v1.SchedulerService/Place";
    const spans = await receiver.traceWith(traceId, [name, "kubemoot.place"]);
    const rpc = oneSpan(spans, name);
    expect(rpc.kind).toBe(SERVER);
    expect(rpc.parentSpanId).toBe(parent);
    expect(rpc.attributes).toMatchObject({
      "rpc.system": "grpc",
      "rpc.service": "kubemoot.scheduler.v1.SchedulerService",
      "rpc.method": "Place",
      "rpc.grpc.status_code": 0,
    });
    expect(oneSpan(spans, "kubemoot.place").parentSpanId).toBe(rpc.spanId);
  });
});
