// Issue 17, endpoint allowlist in the chart: sidecar.providerEndpoints reaches the operator (which
// adds it to every injected sidecar's KUBEMOOT_PROVIDER_ENDPOINTS); unset, the operator gets no
// such variable and the sidecars get the managed providers' host:port only. Rendered by a real helm.
import { describe, expect, it } from "vitest";
import { type K8sObject, renderChart } from "../chart/render.js";

type Container = { name: string; env?: { name: string; value?: string }[] };

function operatorEnv(objs: K8sObject[]): Record<string, string | undefined> {
  const dep = objs.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-operator")) as
    | (K8sObject & { spec: { template: { spec: { containers: Container[] } } } })
    | undefined;
  const c = dep!.spec.template.spec.containers.find((x) => x.name === "operator")!;
  return Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
}

describe("chart: sidecar.providerEndpoints", () => {
  it("is passed to the operator as KUBEMOOT_SIDECAR_PROVIDER_ENDPOINTS", () => {
    const env = operatorEnv(
      renderChart({ set: ["sidecar.providerEndpoints=*.gpu.svc.cluster.local:11434\\,10.0.0.0/8"] }),
    );
    expect(env.KUBEMOOT_SIDECAR_PROVIDER_ENDPOINTS).toBe("*.gpu.svc.cluster.local:11434,10.0.0.0/8");
  });

  it("is not set by default (the managed ModelProviders only)", () => {
    expect(operatorEnv(renderChart({})).KUBEMOOT_SIDECAR_PROVIDER_ENDPOINTS).toBeUndefined();
  });
});
