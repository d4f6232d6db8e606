// The chart's `tracing` values (docs/deploy.md "Tracing", docs/tracing.md "Configuration"): off by
// default, with no OTEL_* variable anywhere; with an endpoint, the operator's container and every
// injected sidecar (through the webhook's config, sidecar.json's extraEnv) get the standard
// variables, a user's extraEnv entry of the same name wins, and the schema refuses what the SDK
// would not understand.
import jsonpatch from "fast-json-patch";
import { Pod } from "kubernetes-models/v1/Pod";
import { beforeAll, describe, expect, it } from "vitest";
import { injectSidecar, type PodLike, parseInjectionOptions } from "../../src/operator/webhook/index.js";
import { tracingConfig } from "../../src/tracing/config.js";
import { type K8sObject, type RenderOptions, renderChart, renderError } from "./render.js";
import { ObjectValidator } from "./validate.js";

interface EnvEntry {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

const ENDPOINT = "http://otel-collector.observability:4318";
const TRACED = [`tracing.endpoint=${ENDPOINT}`];

function operatorEnv(objs: K8sObject[]): EnvEntry[] {
  const d = objs.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-operator")) as
    | (K8sObject & { spec: { template: { spec: { containers: { name: string; env: EnvEntry[] }[] } } } })
    | undefined;
  expect(d, "the operator's Deployment").toBeDefined();
  return d!.spec.template.spec.containers.find((c) => c.name === "operator")!.env;
}

/** The sidecar the webhook injects with the chart's sidecar.json, into a pod of crew-a. */
function injectedSidecarEnv(objs: K8sObject[]): EnvEntry[] {
  const cm = objs.find((o) => o.kind === "ConfigMap" && o.metadata.name.endsWith("-sidecar")) as
    | (K8sObject & { data: Record<string, string> })
    | undefined;
  expect(cm, "the webhook's sidecar config").toBeDefined();
  const options = parseInjectionOptions(JSON.parse(cm!.data["sidecar.json"]!), "sidecar.json");
  const pod: PodLike = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      generateName: "a-",
      namespace: "crew-a",
      labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "a" },
    },
    spec: { containers: [{ name: "agent", image: "agent:1" }] },
  };
  const r = injectSidecar(pod, { namespace: "crew-a", name: "a", env: {} }, options);
  expect(r.injected).toBe(true);
  const after = jsonpatch.applyPatch(structuredClone(pod), r.patch as jsonpatch.Operation[], true, false)
    .newDocument as PodLike & { spec: { initContainers: { env: EnvEntry[] }[] } };
  expect(() => new Pod(after as never).validate()).not.toThrow();
  return after.spec.initContainers[0]!.env;
}

const otel = (env: EnvEntry[]) => env.filter((e) => e.name.startsWith("OTEL_"));
const envValue = (env: EnvEntry[], name: string) => env.find((e) => e.name === name)?.value;

/**
 * What the kubelet hands the process: literal values, `$(NAME)` replaced by the value of a variable
 * declared earlier in the list (a reference to anything else stays as written).
 */
function expand(env: EnvEntry[], fieldRefs: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    const ref = (e.valueFrom as { fieldRef?: { fieldPath: string } } | undefined)?.fieldRef?.fieldPath;
    out[e.name] =
      ref !== undefined
        ? fieldRefs[ref]!
        : (e.value ?? "").replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n: string) => out[n] ?? m);
  }
  return out;
}

describe("tracing off (the default)", () => {
  let objs: K8sObject[];
  beforeAll(() => {
    objs = renderChart({ includeCrds: false });
  });

  it("renders no OTEL_* variable for the operator or in the webhook's config", () => {
    expect(otel(operatorEnv(objs))).toEqual([]);
    const cm = objs.find(
      (o) => o.kind === "ConfigMap" && o.metadata.name.endsWith("-sidecar"),
    ) as K8sObject & {
      data: Record<string, string>;
    };
    expect(cm.data["sidecar.json"]).not.toMatch(/OTEL_/);
  });

  it("injects a sidecar without any OTEL_* variable", () => {
    expect(otel(injectedSidecarEnv(objs))).toEqual([]);
  });

  it("leaves tracing off in both processes", () => {
    const env = (list: EnvEntry[]) => Object.fromEntries(list.map((e) => [e.name, e.value ?? ""]));
    expect(tracingConfig("operator", env(operatorEnv(objs))).enabled).toBe(false);
    expect(tracingConfig("sidecar", env(injectedSidecarEnv(objs))).enabled).toBe(false);
  });
});

describe("tracing.endpoint set", () => {
  const full: RenderOptions = {
    includeCrds: false,
    set: [
      ...TRACED,
      "tracing.sampler=parentbased_traceidratio",
      "tracing.resourceAttributes=deployment.environment=prod",
    ],
    // A string, as the SDK reads it (--set would make 0.1 a number; that is accepted too, below).
    setJson: ['tracing.samplerArg="0.1"'],
  };
  let objs: K8sObject[];
  beforeAll(() => {
    objs = renderChart(full);
  });

  it("renders only objects valid against Kubernetes' schemas", async () => {
    const validator = new ObjectValidator();
    const errors = (await Promise.all(objs.map((o) => validator.validate(o)))).flat();
    expect(errors).toEqual([]);
  });

  it("gives the operator the OTEL_* variables, its pod and namespace as resource attributes", () => {
    const env = operatorEnv(objs);
    expect(otel(env)).toEqual([
      { name: "OTEL_EXPORTER_OTLP_ENDPOINT", value: ENDPOINT },
      { name: "OTEL_SERVICE_NAME", value: "kubemoot-operator" },
      { name: "OTEL_TRACES_SAMPLER", value: "parentbased_traceidratio" },
      { name: "OTEL_TRACES_SAMPLER_ARG", value: "0.1" },
      {
        name: "OTEL_RESOURCE_ATTRIBUTES",
        value: "k8s.namespace.name=$(POD_NAMESPACE),k8s.pod.name=$(POD_NAME),deployment.environment=prod",
      },
    ]);
    const seen = expand(env, {
      "metadata.name": "kubemoot-operator-7d9f-x2x4z",
      "metadata.namespace": "kubemoot",
    });
    expect(seen.OTEL_RESOURCE_ATTRIBUTES).toBe(
      "k8s.namespace.name=kubemoot,k8s.pod.name=kubemoot-operator-7d9f-x2x4z,deployment.environment=prod",
    );
    expect(tracingConfig("operator", seen)).toEqual({ enabled: true, serviceName: "kubemoot-operator" });
  });

  it("gives every injected sidecar the same, as kubemoot-sidecar, with its namespace as a resource attribute", () => {
    const env = injectedSidecarEnv(objs);
    expect(otel(env)).toEqual([
      { name: "OTEL_EXPORTER_OTLP_ENDPOINT", value: ENDPOINT },
      { name: "OTEL_SERVICE_NAME", value: "kubemoot-sidecar" },
      { name: "OTEL_TRACES_SAMPLER", value: "parentbased_traceidratio" },
      { name: "OTEL_TRACES_SAMPLER_ARG", value: "0.1" },
      {
        name: "OTEL_RESOURCE_ATTRIBUTES",
        value: "k8s.namespace.name=$(KUBEMOOT_NAMESPACE),deployment.environment=prod",
      },
    ]);
    const seen = expand(env, {});
    expect(seen.OTEL_RESOURCE_ATTRIBUTES).toBe("k8s.namespace.name=crew-a,deployment.environment=prod");
    expect(tracingConfig("sidecar", seen)).toEqual({ enabled: true, serviceName: "kubemoot-sidecar" });
  });

  it("with the other values left as they are: the default sampler, no sampler argument, only the k8s attributes", () => {
    const plain = renderChart({ includeCrds: false, set: TRACED });
    const op = operatorEnv(plain);
    expect(otel(op).map((e) => e.name)).toEqual([
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_SERVICE_NAME",
      "OTEL_TRACES_SAMPLER",
      "OTEL_RESOURCE_ATTRIBUTES",
    ]);
    expect(envValue(op, "OTEL_TRACES_SAMPLER")).toBe("parentbased_always_on");
    expect(envValue(op, "OTEL_RESOURCE_ATTRIBUTES")).toBe(
      "k8s.namespace.name=$(POD_NAMESPACE),k8s.pod.name=$(POD_NAME)",
    );
    const sc = injectedSidecarEnv(plain);
    expect(envValue(sc, "OTEL_TRACES_SAMPLER_ARG")).toBeUndefined();
    expect(envValue(sc, "OTEL_RESOURCE_ATTRIBUTES")).toBe("k8s.namespace.name=$(KUBEMOOT_NAMESPACE)");
  });

  it("takes a sampler argument given as a number (--set tracing.samplerArg=0.25) as its text", () => {
    const objs = renderChart({ includeCrds: false, set: [...TRACED, "tracing.samplerArg=0.25"] });
    expect(envValue(operatorEnv(objs), "OTEL_TRACES_SAMPLER_ARG")).toBe("0.25");
    expect(envValue(injectedSidecarEnv(objs), "OTEL_TRACES_SAMPLER_ARG")).toBe("0.25");
  });

  it("lets an extraEnv entry of the same name win, once, for the operator and for the sidecars", () => {
    const objs = renderChart({
      includeCrds: false,
      set: [...TRACED],
      setJson: [
        'operator.extraEnv=[{"name":"OTEL_SERVICE_NAME","value":"ops-operator"}]',
        'sidecar.extraEnv=[{"name":"OTEL_TRACES_SAMPLER","value":"always_off"},{"name":"KUBEMOOT_TICKET_LEASE_SECONDS","value":"150"}]',
      ],
    });
    const op = operatorEnv(objs);
    expect(op.filter((e) => e.name === "OTEL_SERVICE_NAME")).toEqual([
      { name: "OTEL_SERVICE_NAME", value: "ops-operator" },
    ]);
    expect(envValue(op, "OTEL_TRACES_SAMPLER")).toBe("parentbased_always_on");
    const sc = injectedSidecarEnv(objs);
    expect(sc.filter((e) => e.name === "OTEL_TRACES_SAMPLER")).toEqual([
      { name: "OTEL_TRACES_SAMPLER", value: "always_off" },
    ]);
    expect(envValue(sc, "OTEL_SERVICE_NAME")).toBe("kubemoot-sidecar");
    expect(envValue(sc, "KUBEMOOT_TICKET_LEASE_SECONDS")).toBe("150");
  });

  it("still traces the operator when the webhook is off", () => {
    const objs = renderChart({ includeCrds: false, set: [...TRACED, "webhook.enabled=false"] });
    expect(envValue(operatorEnv(objs), "OTEL_EXPORTER_OTLP_ENDPOINT")).toBe(ENDPOINT);
    expect(objs.some((o) => o.kind === "ConfigMap" && o.metadata.name.endsWith("-sidecar"))).toBe(false);
  });
});

describe("the schema of tracing", () => {
  const schemaError = /values don't meet the specifications of the schema/;

  // Each error names the value at fault (before `tracing` existed, all named `tracing` itself).
  it.each([
    ["an endpoint without a scheme", ["tracing.endpoint=otel-collector:4318"], /tracing\.endpoint/],
    ["an endpoint of another scheme", ["tracing.endpoint=grpc://otel-collector:4317"], /tracing\.endpoint/],
    ["an unknown sampler", [...TRACED, "tracing.sampler=ratio"], /tracing\.sampler/],
    [
      "a sampler the SDK reads only elsewhere",
      [...TRACED, "tracing.sampler=jaeger_remote"],
      /tracing\.sampler/,
    ],
    ["a sampler argument that is no ratio", [...TRACED, "tracing.samplerArg=10%"], /tracing\.samplerArg/],
    ["a ratio above 1", [...TRACED, "tracing.samplerArg=1.5"], /tracing\.samplerArg/],
    ["an unknown key", [...TRACED, "tracing.headers=x"], /Additional property headers/],
  ])("refuses %s", (_, set, names) => {
    const err = renderError({ set });
    expect(err).toMatch(schemaError);
    expect(err).toMatch(names);
  });

  it.each([
    ["an https endpoint with a path", ["tracing.endpoint=https://collector.example.com:4318/otlp"]],
    ["every SDK sampler name", [...TRACED, "tracing.sampler=always_off"]],
    ["a ratio as text", [...TRACED, "tracing.samplerArg=.5"]],
  ])("accepts %s", (_, set) => {
    expect(renderError({ set, includeCrds: false })).toBeUndefined();
  });
});
