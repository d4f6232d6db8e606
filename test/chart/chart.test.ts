// The Helm chart, rendered by a real helm (see .ci/chart.sh) for the default values and the
// dev and prod bundles: lint clean, every object valid against Kubernetes' schemas and our
// CRDs' schemas, and the properties the chart promises (least-privilege RBAC, a webhook that
// can never block kube-system, a hardened operator, bundles rendered as given).
import { X509Certificate } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import jsonpatch from "fast-json-patch";
import { Pod } from "kubernetes-models/v1/Pod";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  DEFAULT_INJECTION_OPTIONS,
  injectSidecar,
  type PodLike,
  parseInjectionOptions,
} from "../../src/operator/webhook/index.js";
import { CHART_DIR, type K8sObject, lint, ROOT, renderChart, renderError } from "./render.js";
import { ObjectValidator } from "./validate.js";

const BUNDLES: { name: string; files: string[] }[] = [
  { name: "default values", files: [] },
  { name: "dev bundle", files: ["chart/ci/dev-values.yaml"] },
  { name: "prod bundle", files: ["chart/ci/prod-values.yaml"] },
];

type Values = {
  models?: {
    name: string;
    model: string;
    providerRef: string;
    vramMib?: number;
    labels?: Record<string, string>;
  }[];
  providers?: { name: string; endpoint: string; weight?: number }[];
  crewNamespaces?: string[];
  operator?: { replicas?: number };
};

const valuesOf = (file: string) => parse(readFileSync(join(ROOT, file), "utf8")) as Values;
const only = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);
const one = (objs: K8sObject[], kind: string) => {
  const list = only(objs, kind);
  expect(
    list.map((o) => o.metadata.name),
    `exactly one ${kind}`,
  ).toHaveLength(1);
  return list[0]!;
};

let validator: ObjectValidator;
const rendered = new Map<string, K8sObject[]>();

beforeAll(() => {
  validator = new ObjectValidator();
  for (const b of BUNDLES) rendered.set(b.name, renderChart({ valuesFiles: b.files }));
});

describe.each(BUNDLES)("chart with the $name", ({ name, files }) => {
  const objs = () => rendered.get(name)!;

  it("passes helm lint --strict", () => {
    expect(() => lint(files)).not.toThrow();
  });

  it("renders only objects valid against Kubernetes' and our CRDs' schemas", async () => {
    const errors = (await Promise.all(objs().map((o) => validator.validate(o)))).flat();
    expect(errors).toEqual([]);
    expect(objs().length).toBeGreaterThan(5);
  });

  it("ships every CRD under chart/crds/ and the consent-3 archetype", () => {
    const files = readdirSync(join(CHART_DIR, "crds")).filter((f) => f.endsWith(".yaml"));
    expect(only(objs(), "CustomResourceDefinition")).toHaveLength(files.length);
    expect(only(objs(), "MootArchetype").map((o) => o.metadata.name)).toEqual(["consent-3"]);
  });

  it("labels every object with the app.kubernetes.io set", () => {
    for (const o of objs().filter(
      (x) => x.kind !== "CustomResourceDefinition" && x.kind !== "MootArchetype",
    )) {
      expect(o.metadata.labels?.["app.kubernetes.io/name"], `${o.kind}/${o.metadata.name}`).toBe(
        "kubemoot-scheduler",
      );
      expect(o.metadata.labels?.["app.kubernetes.io/instance"]).toBe("kubemoot");
      expect(o.metadata.labels?.["app.kubernetes.io/managed-by"]).toBe("Helm");
    }
  });

  it("runs a hardened operator: non-root, read-only root filesystem, no privilege escalation, probes, resources", () => {
    const d = one(objs(), "Deployment") as K8sObject & {
      spec: {
        template: {
          spec: { securityContext: Record<string, unknown>; containers: Record<string, unknown>[] };
        };
      };
    };
    const pod = d.spec.template.spec;
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    for (const c of pod.containers) {
      const sc = c.securityContext as Record<string, unknown>;
      expect(sc.readOnlyRootFilesystem).toBe(true);
      expect(sc.allowPrivilegeEscalation).toBe(false);
      expect(sc.capabilities).toEqual({ drop: ["ALL"] });
      expect(c.livenessProbe).toBeDefined();
      expect(c.readinessProbe).toBeDefined();
      expect((c.resources as { requests?: object }).requests).toBeDefined();
      expect((c.args as string[])[0]).toBe("operator");
    }
  });

  it("grants the operator only the verbs it uses: no wildcards, no secrets, no deletes", () => {
    const roles = [...only(objs(), "ClusterRole"), ...only(objs(), "Role")] as (K8sObject & {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    })[];
    expect(roles.length).toBeGreaterThan(0);
    const allowed = new Set(["list", "watch", "patch", "create", "get", "update"]);
    for (const r of roles) {
      for (const rule of r.rules) {
        expect(
          rule.verbs.every((v) => allowed.has(v)),
          `${r.metadata.name}: ${rule.verbs}`,
        ).toBe(true);
        expect([...rule.resources, ...rule.apiGroups, ...rule.verbs]).not.toContain("*");
        expect(rule.resources).not.toContain("secrets");
      }
    }
    const cluster = one(objs(), "ClusterRole") as (typeof roles)[number];
    const can = (group: string, resource: string, verb: string) =>
      cluster.rules.some(
        (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
      );
    for (const status of ["agents/status", "modelproviders/status", "crewschedulingpolicies/status"]) {
      expect(can("kubemoot.ai", status, "patch")).toBe(true);
    }
    expect(can("kubemoot.ai", "agents", "patch")).toBe(false);
    expect(can("", "events", "create")).toBe(true);
  });

  it("has a webhook that only sees labelled pods and can never block kube-system", () => {
    const hooks = one(objs(), "MutatingWebhookConfiguration") as K8sObject & {
      webhooks: {
        namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
        objectSelector: { matchLabels: Record<string, string> };
        sideEffects: string;
        clientConfig: { service: { name: string; namespace: string; path: string } };
      }[];
    };
    for (const w of hooks.webhooks) {
      expect(w.namespaceSelector.matchExpressions).toContainEqual(
        expect.objectContaining({
          key: "kubernetes.io/metadata.name",
          operator: "NotIn",
          values: expect.arrayContaining(["kube-system"]),
        }),
      );
      expect(w.objectSelector.matchLabels).toEqual({ "kubemoot.ai/inject": "true" });
      expect(w.sideEffects).toBe("None");
      const svc = only(objs(), "Service").find((s) => s.metadata.name === w.clientConfig.service.name);
      expect(svc, "the webhook's Service is rendered").toBeDefined();
      expect(w.clientConfig.service.path).toBe("/mutate-pods");
    }
  });

  it("gives the operator a sidecar config the webhook accepts, whose patch yields a valid Pod", () => {
    const cm = only(objs(), "ConfigMap").find((c) => c.metadata.name.endsWith("-sidecar")) as
      | (K8sObject & { data: Record<string, string> })
      | undefined;
    expect(cm).toBeDefined();
    const options = parseInjectionOptions(JSON.parse(cm!.data["sidecar.json"]!), "sidecar.json");
    // The chart's defaults are the ones bench memory measures the sidecar with.
    expect([options.nodeOptions, options.mallocArenaMax]).toEqual([
      DEFAULT_INJECTION_OPTIONS.nodeOptions,
      DEFAULT_INJECTION_OPTIONS.mallocArenaMax,
    ]);
    const pod: PodLike = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "a-0",
        namespace: "crew-a",
        labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "a" },
      },
      spec: { containers: [{ name: "agent", image: "agent:1" }] },
    };
    const r = injectSidecar(
      pod,
      { namespace: "crew-a", name: "a", env: { KUBEMOOT_MODEL_MODEL: "m" } },
      options,
    );
    const after = jsonpatch.applyPatch(
      structuredClone(pod),
      r.patch as jsonpatch.Operation[],
      true,
      false,
    ).newDocument;
    expect(() => new Pod(after as never).validate()).not.toThrow();
    const d = one(objs(), "Deployment") as K8sObject & {
      spec: { template: { spec: { containers: { image: string }[] } } };
    };
    expect(options.image).toBe(d.spec.template.spec.containers[0]!.image);
  });
});

describe("sidecar NATS credentials", () => {
  it("sidecar.natsSecret reaches the webhook's config and the injected pod mounts it", () => {
    const objs = renderChart({
      set: [
        "sidecar.natsSecret.name=kubemoot-nats",
        "sidecar.natsSecret.credsKey=user.creds",
        "sidecar.natsSecret.caKey=ca.crt",
      ],
    });
    const cm = only(objs, "ConfigMap").find((c) => c.metadata.name.endsWith("-sidecar")) as
      | (K8sObject & { data: Record<string, string> })
      | undefined;
    const options = parseInjectionOptions(JSON.parse(cm!.data["sidecar.json"]!), "sidecar.json");
    expect(options.natsSecret).toEqual({ name: "kubemoot-nats", credsKey: "user.creds", caKey: "ca.crt" });
    const pod: PodLike = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "a-0",
        namespace: "crew-a",
        labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "a" },
      },
      spec: { containers: [{ name: "agent", image: "agent:1" }] },
    };
    const r = injectSidecar(pod, { namespace: "crew-a", name: "a", env: {} }, options);
    const after = jsonpatch.applyPatch(structuredClone(pod), r.patch as jsonpatch.Operation[], true, false)
      .newDocument as PodLike & { spec: { volumes: unknown[] } };
    expect(after.spec.volumes).toEqual([{ name: "kubemoot-nats", secret: { secretName: "kubemoot-nats" } }]);
    expect(() => new Pod(after as never).validate()).not.toThrow();
  });
});

describe("bundles render the Models and ModelProviders they list", () => {
  it.each(["chart/ci/dev-values.yaml", "chart/ci/prod-values.yaml"])("%s", (file) => {
    const values = valuesOf(file);
    const objs = rendered.get(file.includes("dev") ? "dev bundle" : "prod bundle")!;
    const models = only(objs, "Model") as (K8sObject & { spec: Record<string, unknown> })[];
    expect(models.map((m) => m.metadata.name)).toEqual(values.models!.map((m) => m.name));
    for (const [i, m] of values.models!.entries()) {
      expect(models[i]!.spec).toEqual({
        model: m.model,
        providerRef: m.providerRef,
        ...(m.vramMib !== undefined ? { vramMib: m.vramMib } : {}),
      });
      expect(models[i]!.metadata.labels).toMatchObject(m.labels ?? {});
    }
    const providers = only(objs, "ModelProvider") as (K8sObject & { spec: { endpoint: string } })[];
    expect(providers.map((p) => [p.metadata.name, p.spec.endpoint])).toEqual(
      values.providers!.map((p) => [p.name, p.endpoint]),
    );
  });

  it("a provider's engine is rendered as spec.engine; without one, none (the CRD defaults it)", () => {
    const objs = renderChart({
      set: [
        "providers[0].name=gpu-vllm",
        "providers[0].endpoint=http://vllm.kubemoot.svc:8000",
        "providers[0].engine=vllm",
        "providers[1].name=gpu-ollama",
        "providers[1].endpoint=http://ollama.kubemoot.svc:11434",
      ],
    });
    const providers = only(objs, "ModelProvider") as (K8sObject & { spec: Record<string, unknown> })[];
    expect(providers.map((p) => p.spec)).toEqual([
      { type: "ollama", engine: "vllm", endpoint: "http://vllm.kubemoot.svc:8000" },
      { type: "ollama", endpoint: "http://ollama.kubemoot.svc:11434" },
    ]);
  });

  it("the default values render no Model and no ModelProvider", () => {
    const objs = rendered.get("default values")!;
    expect(only(objs, "Model")).toEqual([]);
    expect(only(objs, "ModelProvider")).toEqual([]);
  });
});

describe("chart variants", () => {
  it("prod: deployments patch only in the crew namespaces, leader election for several replicas, cert-manager TLS", () => {
    const values = valuesOf("chart/ci/prod-values.yaml");
    const objs = rendered.get("prod bundle")!;
    const cluster = one(objs, "ClusterRole") as K8sObject & {
      rules: { resources: string[]; verbs: string[] }[];
    };
    expect(cluster.rules.some((r) => r.resources.includes("deployments") && r.verbs.includes("patch"))).toBe(
      false,
    );
    const crewRoles = only(objs, "Role").filter((r) => r.metadata.name.endsWith("-crew"));
    expect(crewRoles.map((r) => r.metadata.namespace).sort()).toEqual([...values.crewNamespaces!].sort());
    expect(values.operator!.replicas).toBeGreaterThan(1);
    expect(only(objs, "Role").some((r) => r.metadata.name.endsWith("-leader-election"))).toBe(true);
    const d = one(objs, "Deployment") as K8sObject & {
      spec: { replicas: number; template: { spec: { containers: { env: { name: string }[] }[] } } };
    };
    expect(d.spec.replicas).toBe(values.operator!.replicas);
    expect(d.spec.template.spec.containers[0]!.env.map((e) => e.name)).toContain("KUBEMOOT_LEADER_ELECT");
    const cert = one(objs, "Certificate");
    expect(
      one(objs, "MutatingWebhookConfiguration").metadata.annotations?.["cert-manager.io/inject-ca-from"],
    ).toBe(`kubemoot/${cert.metadata.name}`);
    expect(only(objs, "Secret")).toEqual([]);
  });

  it("default: one replica, no Lease access, a cluster-wide deployments patch, a generated CA that signed the serving cert", () => {
    const objs = rendered.get("default values")!;
    expect(only(objs, "Role")).toEqual([]);
    const secret = one(objs, "Secret") as K8sObject & { data: Record<string, string> };
    const ca = new X509Certificate(Buffer.from(secret.data["ca.crt"]!, "base64"));
    const leaf = new X509Certificate(Buffer.from(secret.data["tls.crt"]!, "base64"));
    expect(leaf.verify(ca.publicKey)).toBe(true);
    const svc = only(objs, "Service")[0]!;
    expect(leaf.subjectAltName).toContain(`${svc.metadata.name}.kubemoot.svc`);
    const hooks = one(objs, "MutatingWebhookConfiguration") as K8sObject & {
      webhooks: { clientConfig: { caBundle: string } }[];
    };
    expect(hooks.webhooks[0]!.clientConfig.caBundle).toBe(secret.data["ca.crt"]);
  });

  it("webhook.enabled=false renders no webhook, Secret or sidecar config", () => {
    const objs = renderChart({ set: ["webhook.enabled=false"] });
    for (const kind of ["MutatingWebhookConfiguration", "Secret", "ConfigMap", "Service"])
      expect(only(objs, kind)).toEqual([]);
  });

  it("operator.fleet.enabled=true passes --fleet and grants exactly the fleet's writes", async () => {
    const objs = renderChart({ set: ["operator.fleet.enabled=true"] });
    expect((await Promise.all(objs.map((o) => validator.validate(o)))).flat()).toEqual([]);
    const d = one(objs, "Deployment") as K8sObject & {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(d.spec.template.spec.containers[0]!.args).toContain("--fleet");
    const rules = (
      one(objs, "ClusterRole") as K8sObject & { rules: { resources: string[]; verbs: string[] }[] }
    ).rules;
    const deleters = rules.filter((r) => r.verbs.includes("delete")).flatMap((r) => r.resources);
    expect(deleters.sort()).toEqual(["modelproviders", "modelreplicas"]);
    const without = one(rendered.get("default values")!, "Deployment") as typeof d;
    expect(without.spec.template.spec.containers[0]!.args).not.toContain("--fleet");
  });

  it("user namespace selectors add to the kube-system exclusion, never replace it", () => {
    const objs = renderChart({
      set: [
        "webhook.namespaceSelector.matchExpressions[0].key=team",
        "webhook.namespaceSelector.matchExpressions[0].operator=Exists",
      ],
    });
    const w = (
      one(objs, "MutatingWebhookConfiguration") as K8sObject & {
        webhooks: { namespaceSelector: { matchExpressions: { key: string }[] } }[];
      }
    ).webhooks[0]!;
    expect(w.namespaceSelector.matchExpressions.map((e) => e.key)).toEqual([
      "kubernetes.io/metadata.name",
      "team",
    ]);
  });

  it.each([
    [["webhook.failurePolicy=Sometimes"], "failurePolicy"],
    [["operator.replicass=2"], "replicass"],
    [["models[0].name=Bad_Name", "models[0].model=x", "models[0].providerRef=p"], "models.0.name"],
    [["models[0].name=m"], "model"],
    [["nats.tls.enabled=true"], "nats.tls.secretName"],
    [["sidecar.apiPort=11434"], "must differ"],
  ])("refuses bad values %j (values.schema.json or a template check)", (set, mention) => {
    const err = renderError({ set });
    expect(err).toBeDefined();
    expect(err).toContain(mention);
  });
});

describe("the validator itself", () => {
  it("catches a custom resource that breaks its CRD schema, or carries an undeclared field", async () => {
    const v = new ObjectValidator();
    const bad = {
      apiVersion: "kubemoot.ai/v1alpha1",
      kind: "Model",
      metadata: { name: "m", namespace: "kubemoot" },
      spec: { model: "x", providerRef: "p", vramMib: "lots", vramMb: 1 },
    };
    const errors = await v.validate(bad as never);
    expect(errors.join("\n")).toMatch(/vramMib/);
    expect(errors.join("\n")).toMatch(/\.spec\.vramMb: not in the CRD schema/);
  });

  it("catches a built-in object that breaks Kubernetes' schema, and an unknown kind", async () => {
    const v = new ObjectValidator();
    const errors = await v.validate({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d" },
      spec: { replicas: "two" },
    } as never);
    expect(errors.join()).toMatch(/replicas|selector|template/);
    expect(
      await v.validate({ apiVersion: "example.com/v1", kind: "Nope", metadata: { name: "n" } } as never),
    ).toEqual(["Nope/n: no Kubernetes schema for example.com/v1 Nope"]);
  });
});
