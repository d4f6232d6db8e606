// When tracing starts (docs/tracing.md "Configuration"): only with an OTLP endpoint, never when
// the SDK is disabled or the exporter is `none`; the service name from OTEL_SERVICE_NAME.
import { describe, expect, it } from "vitest";
import { tracingConfig } from "./config.js";

describe("tracingConfig", () => {
  it("is off without an endpoint, on with either endpoint variable", () => {
    expect(tracingConfig("sidecar", {}).enabled).toBe(false);
    expect(tracingConfig("sidecar", { OTEL_EXPORTER_OTLP_ENDPOINT: "  " }).enabled).toBe(false);
    expect(tracingConfig("sidecar", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }).enabled).toBe(true);
    expect(
      tracingConfig("sidecar", { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" }).enabled,
    ).toBe(true);
  });

  it("stays off when the SDK is disabled or the traces exporter is none", () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" };
    expect(tracingConfig("sidecar", { ...on, OTEL_SDK_DISABLED: "true" }).enabled).toBe(false);
    expect(tracingConfig("sidecar", { ...on, OTEL_SDK_DISABLED: "false" }).enabled).toBe(true);
    expect(tracingConfig("sidecar", { ...on, OTEL_TRACES_EXPORTER: "none" }).enabled).toBe(false);
  });

  it("names the service after the command unless OTEL_SERVICE_NAME says", () => {
    expect(tracingConfig("operator", {}).serviceName).toBe("kubemoot-operator");
    expect(tracingConfig("operator", { OTEL_SERVICE_NAME: "crew-a-sidecar" }).serviceName).toBe(
      "crew-a-sidecar",
    );
  });
});
