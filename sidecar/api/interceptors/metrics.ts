// Per-method RPC metrics: calls by method and status code (every protocol, streams included,
// counted when they end) and the time to answer a unary call.
import type { DescMethod } from "@bufbuild/protobuf";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import {
  Counter,
  Histogram,
  type OpenMetricsContentType,
  type PrometheusContentType,
  type Registry,
} from "prom-client";
import { observeCalls } from "./outcome.js";

export function metricsInterceptor(
  registry: Registry<PrometheusContentType> | Registry<OpenMetricsContentType>,
) {
  const calls = new Counter({
    name: "kubemoot_rpc_calls_total",
    help: "API calls by method and status code (ok, invalid_argument, …), counted when they end",
    labelNames: ["method", "code"] as const,
    registers: [registry],
  });
  const seconds = new Histogram({
    name: "kubemoot_rpc_duration_seconds",
    help: "Time to answer a unary API call, by method",
    labelNames: ["method"] as const,
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [registry],
  });
  // Children per method, made once: labelling every call would hash the labels every call.
  const byMethod = new Map<
    DescMethod,
    { name: string; ok: Counter.Internal; seconds: Histogram.Internal<"method"> }
  >();
  const children = (method: DescMethod) => {
    let c = byMethod.get(method);
    if (c === undefined) {
      const name = `${method.parent.typeName}/${method.name}`;
      c = { name, ok: calls.labels(name, "ok"), seconds: seconds.labels(name) };
      byMethod.set(method, c);
    }
    return c;
  };
  return observeCalls((req) => {
    const c = children(req.method);
    const t0 = performance.now();
    const unary = !req.stream;
    return (err) => {
      if (unary) c.seconds.observe((performance.now() - t0) / 1000);
      if (err === undefined) c.ok.inc();
      else calls.inc({ method: c.name, code: codeToString(err.code) });
    };
  });
}
