import fc from "fast-check";
import jsonpatch from "fast-json-patch";
import { Pod } from "kubernetes-models/v1/Pod";
import { describe, expect, it } from "vitest";
import { type AgentInjectionBinding, injectSidecar, type PodLike } from "./inject.js";
import {
  DEFAULT_INJECTION_OPTIONS,
  type InjectionOptions,
  PROTECTED_NAMESPACES,
  parseInjectionOptions,
  SIDECAR_CONTAINER_NAME,
  STATUS_ANNOTATION,
} from "./options.js";

const OPTIONS: InjectionOptions = {
  ...DEFAULT_INJECTION_OPTIONS,
  image: "registry.example/kubemoot-scheduler:test",
  apiPort: 50061,
  healthPort: 50062,
  proxyPort: 11500,
  drainSeconds: 25,
  natsUrl: "nats://nats.kubemoot:4222",
};

const BINDING: AgentInjectionBinding = {
  namespace: "crew-a",
  name: "analyst",
  env: {
    KUBEMOOT_MODEL_MODEL: "qwen3:14b",
    KUBEMOOT_MODEL_ENDPOINT: "http://ollama-a.kubemoot.svc:11434",
    KUBEMOOT_MODEL_CANDIDATES_MULLING: '[{"model":"qwen3:14b","score":60}]',
    KUBEMOOT_MODEL_CANDIDATES_TRIAGE: "[]",
  },
};

function pod(over: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): PodLike {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      generateName: "analyst-7d9f-",
      namespace: "crew-a",
      labels: over.labels ?? { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "analyst" },
      ...(over.annotations ? { annotations: over.annotations } : {}),
    },
    spec: {
      containers: [
        { name: "agent", image: "agent:1", env: [{ name: "LOG", value: "debug" }] },
        { name: "tools", image: "tools:1" },
      ],
      terminationGracePeriodSeconds: 30,
    },
  };
}

function apply(p: PodLike, ops: unknown[]): PodLike {
  // validateOperation: every op must be well-formed and apply to the document as it is.
  return jsonpatch.applyPatch(structuredClone(p), ops as jsonpatch.Operation[], true, false)
    .newDocument as PodLike;
}

type Container = { name: string; env?: { name: string; value?: string }[]; [k: string]: unknown };
const containers = (p: PodLike) => (p.spec?.containers ?? []) as Container[];
const inits = (p: PodLike) => (p.spec?.initContainers ?? []) as Container[];
const envOf = (c: Container) => Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));

describe("injectSidecar: a labelled pod with a binding", () => {
  const before = pod();
  const result = injectSidecar(before, BINDING, OPTIONS);
  const after = apply(before, result.patch);
  const sidecar = inits(after)[0]!;

  it("adds the sidecar as a native sidecar (first init container, restartPolicy Always)", () => {
    expect(result.injected).toBe(true);
    expect(inits(after)).toHaveLength(1);
    expect(sidecar.name).toBe(SIDECAR_CONTAINER_NAME);
    expect(sidecar.restartPolicy).toBe("Always");
    expect(sidecar.image).toBe(OPTIONS.image);
    expect(sidecar.args).toEqual(expect.arrayContaining(["--drain-seconds", String(OPTIONS.drainSeconds)]));
  });

  it("keeps the API and the proxy on 127.0.0.1; only the health port listens on the pod IP", () => {
    const args = sidecar.args as string[];
    const flag = (name: string) => args[args.indexOf(name) + 1];
    expect(flag("--listen")).toBe(`127.0.0.1:${OPTIONS.apiPort}`);
    expect(flag("--proxy-listen")).toBe(`127.0.0.1:${OPTIONS.proxyPort}`);
    expect(flag("--health-listen")).toBe(`0.0.0.0:${OPTIONS.healthPort}`);
    // The API port is not declared: nothing outside the pod is meant to reach it.
    expect(sidecar.ports).toEqual([
      { name: "kubemoot-health", containerPort: OPTIONS.healthPort, protocol: "TCP" },
    ]);
  });

  it("probes startup, readiness and liveness over grpc.health.v1 on the health port", () => {
    type Probe = { grpc: { port: number; service: string } };
    const startup = sidecar.startupProbe as Probe;
    const readiness = sidecar.readinessProbe as Probe;
    const liveness = sidecar.livenessProbe as Probe;
    expect(startup.grpc.port).toBe(OPTIONS.healthPort);
    expect(readiness.grpc.port).toBe(OPTIONS.healthPort);
    expect(readiness.grpc.service).toBe("kubemoot.scheduler.v1.SchedulerService");
    expect(liveness.grpc.port).toBe(OPTIONS.healthPort);
    // A service the sidecar keeps SERVING through a drain (sidecar/api/server.ts).
    expect(liveness.grpc.service).toBe("kubemoot.liveness");
  });

  it("gives the sidecar the agent's identity, NATS URL and every variable of its binding", () => {
    const env = envOf(sidecar);
    expect(env.KUBEMOOT_NAMESPACE).toBe("crew-a");
    expect(env.KUBEMOOT_AGENT_NAME).toBe("analyst");
    expect(env.KUBEMOOT_NATS_URL).toBe(OPTIONS.natsUrl);
    for (const [k, v] of Object.entries(BINDING.env)) expect(env[k]).toBe(v);
  });

  it("points every agent container's OLLAMA_HOST at the local proxy, keeping its other env", () => {
    for (const c of containers(after))
      expect(envOf(c).OLLAMA_HOST).toBe(`http://127.0.0.1:${OPTIONS.proxyPort}`);
    expect(envOf(containers(after)[0]!).LOG).toBe("debug");
  });

  it("keeps the grace period above the drain, says so in the annotation, and the pod stays valid", () => {
    expect(after.spec?.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(OPTIONS.drainSeconds + 1);
    expect(after.metadata?.annotations?.[STATUS_ANNOTATION]).toBe("injected");
    expect(() => new Pod(after as never).validate()).not.toThrow();
  });

  it("is idempotent: the patched pod yields no patch", () => {
    expect(injectSidecar(after, BINDING, OPTIONS).patch).toEqual([]);
  });
});

describe("injectSidecar: what it leaves alone", () => {
  it.each([
    ["no labels", {}],
    ["inject label false", { "kubemoot.ai/inject": "false", "kubemoot.ai/agent": "analyst" }],
    ["agent label only", { "kubemoot.ai/agent": "analyst" }],
  ])("an unlabelled pod (%s) is untouched", (_name, labels) => {
    const r = injectSidecar(pod({ labels }), BINDING, OPTIONS);
    expect(r.patch).toEqual([]);
    expect(r.injected).toBe(false);
  });

  it.each(PROTECTED_NAMESPACES)("never touches %s, even labelled and bound", (ns) => {
    const p = pod();
    p.metadata!.namespace = ns;
    const r = injectSidecar(p, { ...BINDING, namespace: ns }, OPTIONS);
    expect(r.patch).toEqual([]);
    expect(r.reasons.join()).toContain(ns);
  });

  it("leaves the spec unchanged when the Agent has no binding yet, and says why in an annotation", () => {
    const before = pod({ annotations: { "example.com/owner": "team-a" } });
    const r = injectSidecar(before, undefined, OPTIONS);
    const after = apply(before, r.patch);
    expect(after.spec).toEqual(before.spec);
    expect(after.metadata?.annotations?.["example.com/owner"]).toBe("team-a");
    expect(after.metadata?.annotations?.[STATUS_ANNOTATION]).toMatch(
      /^skipped: .*crew-a\/analyst.*no binding/,
    );
    expect(injectSidecar(after, undefined, OPTIONS).patch).toEqual([]);
  });

  it("skips a pod that names no Agent", () => {
    const before = pod({ labels: { "kubemoot.ai/inject": "true" } });
    const after = apply(before, injectSidecar(before, BINDING, OPTIONS).patch);
    expect(after.spec).toEqual(before.spec);
    expect(after.metadata?.annotations?.[STATUS_ANNOTATION]).toContain("kubemoot.ai/agent");
  });

  it("skips when the binding is another agent's", () => {
    const r = injectSidecar(pod(), { ...BINDING, name: "coordinator" }, OPTIONS);
    expect(r.injected).toBe(false);
    expect(r.reasons[0]).toContain("crew-a/coordinator");
  });
});

describe("injectSidecar: details", () => {
  it("puts the sidecar before existing init containers", () => {
    const before = pod();
    before.spec!.initContainers = [{ name: "migrate", image: "m:1" }];
    const after = apply(before, injectSidecar(before, BINDING, OPTIONS).patch);
    expect(inits(after).map((c) => c.name)).toEqual([SIDECAR_CONTAINER_NAME, "migrate"]);
  });

  it("replaces an OLLAMA_HOST that points elsewhere, and honours kubemoot.ai/env-containers", () => {
    const before = pod({
      labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "analyst" },
      annotations: { "kubemoot.ai/env-containers": "agent" },
    });
    (containers(before)[0]!.env as unknown[]).push({ name: "OLLAMA_HOST", value: "http://elsewhere:11434" });
    const after = apply(before, injectSidecar(before, BINDING, OPTIONS).patch);
    const agentEnv = containers(after)[0]!.env!;
    expect(agentEnv.filter((e) => e.name === "OLLAMA_HOST")).toEqual([
      { name: "OLLAMA_HOST", value: `http://127.0.0.1:${OPTIONS.proxyPort}` },
    ]);
    expect(envOf(containers(after)[1]!).OLLAMA_HOST).toBeUndefined();
  });

  it("raises a short grace period to drain + margin and keeps a long one", () => {
    const short = pod();
    short.spec!.terminationGracePeriodSeconds = 5;
    const long = pod();
    long.spec!.terminationGracePeriodSeconds = 300;
    const s = apply(short, injectSidecar(short, BINDING, OPTIONS).patch);
    const l = apply(long, injectSidecar(long, BINDING, OPTIONS).patch);
    expect(s.spec?.terminationGracePeriodSeconds).toBeGreaterThan(OPTIONS.drainSeconds);
    expect(l.spec?.terminationGracePeriodSeconds).toBe(300);
  });

  it("runs the sidecar with a bounded V8 heap and two malloc arenas, which extraEnv can override", () => {
    const before = pod({ labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "analyst" } });
    const env = envOf(inits(apply(before, injectSidecar(before, BINDING, OPTIONS).patch))[0]!);
    expect(env.NODE_OPTIONS).toBe("--max-old-space-size=80 --max-semi-space-size=1");
    expect(env.MALLOC_ARENA_MAX).toBe("1");
    const own: InjectionOptions = {
      ...OPTIONS,
      extraEnv: [{ name: "NODE_OPTIONS", value: "--max-old-space-size=128" }],
      mallocArenaMax: 0,
    };
    const container = inits(apply(before, injectSidecar(before, BINDING, own).patch))[0]!;
    const names = (container.env ?? []).map((e) => e.name);
    expect(names.filter((n) => n === "NODE_OPTIONS")).toHaveLength(1);
    expect(envOf(container).NODE_OPTIONS).toBe("--max-old-space-size=128");
    expect(names).not.toContain("MALLOC_ARENA_MAX");
    const none = { ...OPTIONS, nodeOptions: "", mallocArenaMax: 0 };
    expect(
      envOf(inits(apply(before, injectSidecar(before, BINDING, none).patch))[0]!).NODE_OPTIONS,
    ).toBeUndefined();
  });

  it("gives every sidecar the key layout of its options (the default too), which extraEnv cannot change", () => {
    const before = pod();
    const layoutOf = (o: InjectionOptions) => {
      const c = inits(apply(before, injectSidecar(before, BINDING, o).patch))[0]!;
      return (c.env ?? []).filter((e) => e.name === "KUBEMOOT_KEY_LAYOUT").map((e) => e.value);
    };
    expect(layoutOf(OPTIONS)).toEqual(["scoped"]);
    expect(layoutOf({ ...OPTIONS, keyLayout: "kubemoot" })).toEqual(["kubemoot"]);
    expect(
      layoutOf({ ...OPTIONS, extraEnv: [{ name: "KUBEMOOT_KEY_LAYOUT", value: "kubemoot" }] }),
      "the operator's layout wins over extraEnv",
    ).toEqual(["scoped"]);
  });

  it("sets KUBEMOOT_CREW from the crew label, namespaced", () => {
    const before = pod({
      labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "analyst", "kubemoot.ai/crew": "pilot" },
    });
    const after = apply(before, injectSidecar(before, BINDING, OPTIONS).patch);
    expect(envOf(inits(after)[0]!).KUBEMOOT_CREW).toBe("crew-a/pilot");
  });

  it("mounts the NATS Secret and points the sidecar at its files (credentials, mutual TLS)", () => {
    const withSecret: InjectionOptions = {
      ...OPTIONS,
      natsSecret: {
        name: "kubemoot-nats",
        credsKey: "user.creds",
        caKey: "ca.crt",
        certKey: "tls.crt",
        keyKey: "tls.key",
      },
    };
    const before = pod();
    const after = apply(before, injectSidecar(before, BINDING, withSecret).patch);
    const sidecar = inits(after)[0]!;
    expect(envOf(sidecar)).toMatchObject({
      KUBEMOOT_NATS_CREDS: "/etc/kubemoot/nats/user.creds",
      KUBEMOOT_NATS_TLS_CA: "/etc/kubemoot/nats/ca.crt",
      KUBEMOOT_NATS_TLS_CERT: "/etc/kubemoot/nats/tls.crt",
      KUBEMOOT_NATS_TLS_KEY: "/etc/kubemoot/nats/tls.key",
    });
    expect(sidecar.volumeMounts).toEqual([
      { name: "kubemoot-nats", mountPath: "/etc/kubemoot/nats", readOnly: true },
    ]);
    expect(after.spec?.volumes).toEqual([{ name: "kubemoot-nats", secret: { secretName: "kubemoot-nats" } }]);
    expect(() => new Pod(after as ConstructorParameters<typeof Pod>[0]).validate()).not.toThrow();
    // A pod with volumes of its own keeps them; a second pass changes nothing.
    const own = { ...before, spec: { ...before.spec, volumes: [{ name: "data", emptyDir: {} }] } } as PodLike;
    const twice = apply(own, injectSidecar(own, BINDING, withSecret).patch);
    expect(((twice.spec?.volumes ?? []) as { name: string }[]).map((v) => v.name)).toEqual([
      "data",
      "kubemoot-nats",
    ]);
    expect(
      injectSidecar(twice, BINDING, withSecret).patch.filter(
        (op) => !String((op as { path: string }).path).startsWith("/metadata"),
      ),
    ).toEqual([]);
    // Half a client pair is refused when the options are read.
    expect(() => parseInjectionOptions({ natsSecret: { name: "s", certKey: "tls.crt" } })).toThrow(
      /certKey and keyKey/,
    );
  });

  it("property: any pod shape applies cleanly, stays a valid Pod, and a second pass is a no-op", () => {
    const envVar = fc.record({
      name: fc.constantFrom("OLLAMA_HOST", "A", "B", "KUBEMOOT_MODEL_MODEL"),
      value: fc.string({ maxLength: 8 }),
    });
    const container = fc.record(
      {
        name: fc.constantFrom("agent", "tools", "web"),
        image: fc.constant("x:1"),
        env: fc.array(envVar, { maxLength: 3 }),
      },
      { requiredKeys: ["name", "image"] },
    );
    const arb = fc.record({
      containers: fc.uniqueArray(container, { minLength: 1, maxLength: 3, selector: (c) => c.name }),
      initContainers: fc.option(fc.uniqueArray(container, { maxLength: 2, selector: (c) => c.name }), {
        nil: undefined,
      }),
      grace: fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
      annotations: fc.option(fc.dictionary(fc.constantFrom("a/b", "c~d", "e"), fc.string({ maxLength: 4 })), {
        nil: undefined,
      }),
      bound: fc.boolean(),
      drain: fc.integer({ min: 0, max: 60 }),
    });
    fc.assert(
      fc.property(arb, (g) => {
        const p: PodLike = {
          apiVersion: "v1",
          kind: "Pod",
          metadata: {
            namespace: "crew-a",
            labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "analyst" },
            ...(g.annotations ? { annotations: g.annotations } : {}),
          },
          spec: {
            containers: g.containers,
            ...(g.initContainers ? { initContainers: g.initContainers } : {}),
            ...(g.grace !== undefined ? { terminationGracePeriodSeconds: g.grace } : {}),
          },
        };
        const o = { ...OPTIONS, drainSeconds: g.drain };
        const b = g.bound ? BINDING : undefined;
        const first = injectSidecar(p, b, o);
        const after = apply(p, first.patch);
        expect(first.injected).toBe(g.bound);
        if (!g.bound) expect(after.spec).toEqual(p.spec);
        new Pod(after as never).validate();
        expect(injectSidecar(after, b, o).patch).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});

describe("parseInjectionOptions", () => {
  it("fills defaults and reads what the chart writes", () => {
    const o = parseInjectionOptions({
      image: "img:1",
      apiPort: 50071,
      healthPort: 50072,
      resources: { limits: { memory: "1Gi" } },
    });
    expect(o.image).toBe("img:1");
    expect([o.apiPort, o.healthPort]).toEqual([50071, 50072]);
    expect(o.proxyPort).toBe(DEFAULT_INJECTION_OPTIONS.proxyPort);
    expect(o.resources).toEqual({ limits: { memory: "1Gi" } });
    const mem = parseInjectionOptions({ nodeOptions: "--max-old-space-size=64", mallocArenaMax: 0 });
    expect([mem.nodeOptions, mem.mallocArenaMax]).toEqual(["--max-old-space-size=64", 0]);
    expect(o.keyLayout).toBe("scoped");
    expect(parseInjectionOptions({ keyLayout: "kubemoot" }).keyLayout).toBe("kubemoot");
  });

  it.each([
    [{ imagePullPolicy: "Sometimes" }, "imagePullPolicy"],
    [{ apiPort: 70000 }, "apiPort"],
    [{ apiPort: 11434 }, "proxyPort"],
    [{ healthPort: 0 }, "healthPort"],
    [{ healthPort: 50051 }, "healthPort"],
    [{ healthPort: 11434 }, "healthPort"],
    [{ drainSeconds: -1 }, "drainSeconds"],
    [{ runAsUser: 0 }, "runAsUser"],
    [{ imagee: "x" }, "imagee"],
    [{ extraEnv: [{ value: "x" }] }, "extraEnv[0]"],
    [{ nodeOptions: "max-old-space-size=48" }, "nodeOptions"],
    [{ nodeOptions: 48 }, "nodeOptions"],
    [{ mallocArenaMax: -1 }, "mallocArenaMax"],
    [{ mallocArenaMax: 1.5 }, "mallocArenaMax"],
    [{ keyLayout: "flat" }, "keyLayout"],
    [{ keyLayout: "" }, "keyLayout"],
  ])("rejects %j naming %s", (raw, field) => {
    expect(() => parseInjectionOptions(raw)).toThrow(field);
  });
});
