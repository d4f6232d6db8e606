// The project's tracer (docs/tracing.md): named once, so every span says where it came from.
// Without a registered provider the API hands out non-recording spans: no cost beyond the call.
import { type Tracer, trace } from "@opentelemetry/api";

export function tracer(): Tracer {
  return trace.getTracer("kubemoot-scheduler");
}
