// The GenAI client metrics of proxied calls (docs/tracing.md "Metrics"): the OpenTelemetry GenAI
// conventions' gen_ai.client.operation.duration, gen_ai.client.token.usage and
// gen_ai.client.operation.time_to_first_chunk, on the sidecar's prom-client registry under the
// names an OpenTelemetry Prometheus exporter gives them, with the convention's bucket advice. When
// the registry speaks OpenMetrics (tracing on), each observation carries its call's trace as an
// exemplar. Label values are bounded: a model name the catalog never saw is `_OTHER`.
import { Histogram, type OpenMetricsContentType, type PrometheusContentType, Registry } from "prom-client";
import { OPERATION } from "./call-span.js";
import type { CallRecord } from "./options.js";

const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
const TTFC_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The convention's value for an attribute outside a bounded set. */
const OTHER = "_OTHER";

const LABELS = [
  "gen_ai_operation_name",
  "gen_ai_provider_name",
  "gen_ai_request_model",
  "gen_ai_response_model",
  "error_type",
] as const;
type Labels = Record<(typeof LABELS)[number], string>;

export type GenAiMetrics = (r: CallRecord) => void;

export function createGenAiMetrics(
  registry: Registry<PrometheusContentType> | Registry<OpenMetricsContentType>,
): GenAiMetrics {
  const enableExemplars = registry.contentType === Registry.OPENMETRICS_CONTENT_TYPE;
  const duration = new Histogram({
    name: "gen_ai_client_operation_duration_seconds",
    help: "GenAI operation duration: a proxied call from its request to its answer's last byte, waiting for a GPU included",
    labelNames: LABELS,
    buckets: DURATION_BUCKETS,
    registers: [registry],
    enableExemplars,
  });
  const tokens = new Histogram({
    name: "gen_ai_client_token_usage",
    help: "Input and output tokens of a proxied call, as its engine reported them (gen_ai_token_type)",
    labelNames: [...LABELS.filter((l) => l !== "error_type"), "gen_ai_token_type"] as const,
    buckets: TOKEN_BUCKETS,
    registers: [registry],
    enableExemplars,
  });
  const firstChunk = new Histogram({
    name: "gen_ai_client_operation_time_to_first_chunk_seconds",
    help: "Streamed calls: from the request to the first chunk of the answer, waiting for a GPU included",
    labelNames: LABELS.filter((l) => l !== "error_type"),
    buckets: TTFC_BUCKETS,
    registers: [registry],
    enableExemplars,
  });
  return (r) => {
    const labels = labelsOf(r);
    const exemplar =
      enableExemplars && r.traceId !== undefined && r.spanId !== undefined
        ? { trace_id: r.traceId, span_id: r.spanId }
        : undefined;
    observe(duration, labels, r.durationMs / 1000, exemplar);
    const { error_type: _, ...ok } = labels;
    if (r.promptTokens > 0) observe(tokens, { ...ok, gen_ai_token_type: "input" }, r.promptTokens, exemplar);
    if (r.outputTokens > 0) observe(tokens, { ...ok, gen_ai_token_type: "output" }, r.outputTokens, exemplar);
    if (r.stream && r.ttfbMs > 0 && labels.error_type === "") {
      // From the request, as the agent sees it: the wait for a GPU and the forward's first byte.
      observe(firstChunk, ok, (r.durationMs - r.latencyMs + r.ttfbMs) / 1000, exemplar);
    }
  };
}

/** One observation, with its call's trace as the exemplar when there is one. */
function observe(
  h: Histogram<string>,
  labels: Record<string, string>,
  value: number,
  exemplarLabels: Record<string, string> | undefined,
): void {
  if (exemplarLabels !== undefined) h.observe({ labels, value, exemplarLabels });
  else h.observe(labels, value);
}

function labelsOf(r: CallRecord): Labels {
  // A placed call's requested name resolved in the catalog; so did a refusal for capacity. Any
  // other request's name is whatever the client sent: not a label value.
  const known = r.model !== "" || CAPACITY_REFUSALS.has(r.reason ?? "");
  return {
    gen_ai_operation_name: OPERATION[r.api],
    gen_ai_provider_name: r.model !== "" ? r.engine : OTHER,
    gen_ai_request_model: known && r.requestedModel !== "" ? r.requestedModel : OTHER,
    gen_ai_response_model: r.model || OTHER,
    error_type:
      r.status >= 400 || r.reason === "stream-error" || r.reason === "client-gone"
        ? (r.reason ?? String(r.status))
        : "",
  };
}

const CAPACITY_REFUSALS: ReadonlySet<string> = new Set([
  "gpu-busy",
  "model-too-large",
  "prompt-too-large",
  "provider-unavailable",
]);
