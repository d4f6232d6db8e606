// Tracing (docs/tracing.md): starting the OpenTelemetry SDK from the OTEL_* variables, W3C
// context over headers, the project's tracer, and the one table of span and attribute names.
export { contextFromFetchHeaders, contextFromHeaders, withTraceHeaders } from "./http-context.js";
export { ATTR, EVENT, SPAN } from "./names.js";
export { startTracing, tracingActive } from "./start.js";
export { tracer } from "./tracer.js";
