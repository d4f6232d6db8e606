// When tracing is on (docs/tracing.md "Configuration"): the standard OTEL_* variables, read as the
// OpenTelemetry SDK reads them. Off unless an OTLP endpoint is set, so that a process nobody traces
// loads none of the SDK and its calls cost a no-op API call at most. Pure: the environment is
// passed in.
export interface TracingConfig {
  /** Whether to start the SDK at all. */
  enabled: boolean;
  /** OTEL_SERVICE_NAME, else `kubemoot-<command>`. */
  serviceName: string;
}

type Env = Readonly<Record<string, string | undefined>>;

function set(env: Env, name: string): boolean {
  return (env[name] ?? "").trim() !== "";
}

export function tracingConfig(command: string, env: Env): TracingConfig {
  const endpoint = set(env, "OTEL_EXPORTER_OTLP_ENDPOINT") || set(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const disabled = (env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true";
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "otlp").split(",").map((s) => s.trim().toLowerCase());
  return {
    enabled: endpoint && !disabled && !exporters.includes("none"),
    serviceName: (env.OTEL_SERVICE_NAME ?? "").trim() || `kubemoot-${command}`,
  };
}
