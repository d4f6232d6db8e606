// Prometheus metrics of the proxy (prom-client), as ProxyHooks: register them on the sidecar's
// registry and pass the hooks to startProxy.
import {
  Counter,
  Gauge,
  Histogram,
  type OpenMetricsContentType,
  type PrometheusContentType,
  type Registry,
} from "prom-client";
import { createGenAiMetrics } from "./genai-metrics.js";
import type { ProxyHooks } from "./options.js";

export function createProxyMetrics(
  registry: Registry<PrometheusContentType> | Registry<OpenMetricsContentType>,
): ProxyHooks {
  const calls = new Counter({
    name: "kubemoot_proxy_calls_total",
    help: "Proxied inference calls by API, HTTP status and reason (empty when answered normally)",
    labelNames: ["api", "status", "reason"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "kubemoot_proxy_call_duration_seconds",
    help: "Forwarded calls: from sending to the provider to the answer's last byte",
    labelNames: ["api"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const queueWait = new Histogram({
    name: "kubemoot_proxy_queue_wait_seconds",
    help: "Time calls waited for a busy GPU before they were placed or gave up",
    buckets: [0.01, 0.1, 0.5, 1, 5, 15, 30, 60, 90],
    registers: [registry],
  });
  const truncations = new Counter({
    name: "kubemoot_proxy_truncations_total",
    help: "Calls whose engine evaluated far fewer prompt tokens than were sent (a silent cut)",
    labelNames: ["model"] as const,
    registers: [registry],
  });
  const inflight = new Gauge({
    name: "kubemoot_proxy_inflight_calls",
    help: "Proxied calls in flight (placing, waiting or forwarding)",
    registers: [registry],
  });
  const genAi = createGenAiMetrics(registry);
  return {
    onCall(r) {
      genAi(r);
      calls.inc({ api: r.api, status: String(r.status), reason: r.reason ?? "" });
      if (r.latencyMs > 0) latency.observe({ api: r.api }, r.latencyMs / 1000);
      if (r.queueWaitMs > 0) queueWait.observe(r.queueWaitMs / 1000);
    },
    onTruncation(t) {
      truncations.inc({ model: t.model });
    },
    onInflight(n) {
      inflight.set(n);
    },
  };
}
