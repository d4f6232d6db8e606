// Starts the OpenTelemetry SDK for a long-running command (docs/tracing.md "Configuration"): a
// Node tracer provider (AsyncLocalStorage context, W3C trace context and baggage propagation,
// the sampler OTEL_TRACES_SAMPLER names), a batch processor with a bounded queue in front of the
// OTLP/HTTP protobuf exporter (OTEL_EXPORTER_OTLP_* set its endpoint, headers and timeout), and
// a resource from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. The SDK is imported only
// here, only when tracing is on. A collector that is down loses spans (the queue is bounded),
// never calls.
import type { Logger } from "../log/index.js";
import { tracingConfig } from "./config.js";

let exporting = false;

/** Whether this process exports spans (a tracing SDK was started here and not shut down). */
export function tracingActive(): boolean {
  return exporting;
}

export interface RunningTracing {
  /** Flushes what is queued (bounded by the exporter's timeout) and stops. */
  shutdown(): Promise<void>;
}

/** The SDK for `command`, or undefined when the environment leaves tracing off. */
export async function startTracing(
  command: string,
  version: string,
  logger: Logger,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<RunningTracing | undefined> {
  const cfg = tracingConfig(command, env);
  if (!cfg.enabled) return undefined;
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, resources] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-proto"),
      import("@opentelemetry/resources"),
    ]);
  const resource = resources
    .resourceFromAttributes({ "service.name": cfg.serviceName, "service.version": version })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter(), {
        // Bounded: a collector that is down costs at most this many spans in memory.
        maxQueueSize: 2048,
        maxExportBatchSize: 512,
      }),
    ],
  });
  provider.register();
  exporting = true;
  logger.info({ service: cfg.serviceName }, "tracing: exporting spans over OTLP");
  return {
    async shutdown() {
      exporting = false;
      await provider.shutdown().catch((err: unknown) => logger.warn({ err }, "tracing: shutdown failed"));
    },
  };
}
