// The chart's trust boundary (docs/deploy.md "NATS credentials", "RBAC and network policies"),
// rendered by a real helm and validated against Kubernetes' schemas: least-privilege NATS
// users per role, TopologySource credential Secrets readable only in the release namespace
// through a Role, and NetworkPolicies for the operator and the webhook.
import { beforeAll, describe, expect, it } from "vitest";
import { injectSidecar, type PodLike, parseInjectionOptions } from "../../src/operator/webhook/index.js";
import { type K8sObject, renderChart, renderError } from "./render.js";
import { ObjectValidator } from "./validate.js";

const OP_NKEY = `U${"A".repeat(55)}`;
const OP_SEED = `SU${"A".repeat(56)}`;
const SC_NKEY = `U${"B".repeat(55)}`;
const SC_SEED = `SU${"B".repeat(56)}`;
const SC2_NKEY = `U${"C".repeat(55)}`;

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };
type Role = K8sObject & { rules: Rule[] };
interface NatsUser {
  nkey: string;
  permissions: { publish: { allow: string[] }; subscribe: { allow: string[] } };
}
type Policy = K8sObject & {
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress: { ports: { port: string | number }[]; from?: unknown[] }[];
    egress?: unknown[];
  };
};

const only = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);
const named = (objs: K8sObject[], kind: string, suffix: string) =>
  objs.find((o) => o.kind === kind && o.metadata.name.endsWith(suffix));

const pub = (u: NatsUser) => u.permissions.publish.allow;
const BUCKETS = [
  "kubemoot_provider_state",
  "kubemoot_provider_tickets",
  "kubemoot_model_demand",
  "kubemoot_discussion_bindings",
];

/** What a sidecar user of `namespaces` may publish to in the scoped key layout, in the chart's order. */
function scopedWrites(namespaces: string[]): string[] {
  const t = "$KV.kubemoot_provider_tickets";
  const d = "$KV.kubemoot_model_demand";
  return [
    ...namespaces.flatMap((n) => [`${t}.t.*.${n}.>`, `${t}.c.*.${n}.*`]),
    `${t}.g.*.claim`,
    `${t}.r.*.*`,
    `${t}.s.*.suspect`,
    ...namespaces.flatMap((n) => [
      `${d}.wait.*.${n}.*`,
      `${d}.intent.*.${n}.*`,
      `${d}.use.*.${n}`,
      `${d}.sel.${n}.*.*`,
      `${d}.queue.*.${n}.*`,
      `${d}.svc.${n}.*.*`,
    ]),
  ];
}

function usersOf(objs: K8sObject[]): NatsUser[] {
  const secret = named(objs, "Secret", "-nats-authorization") as K8sObject & {
    stringData: Record<string, string>;
  };
  return JSON.parse(secret.stringData["users.json"]!) as NatsUser[];
}

type EnvList = { name: string; value?: string }[];
function operatorEnv(objs: K8sObject[]): Record<string, string | undefined> {
  const d = only(objs, "Deployment")[0] as K8sObject & {
    spec: { template: { spec: { containers: { env: EnvList }[] } } };
  };
  return Object.fromEntries(d.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
}

/** The env of the sidecar the webhook injects with the chart's sidecar.json. */
function injectedEnv(objs: K8sObject[]): Record<string, string | undefined> {
  const cm = named(objs, "ConfigMap", "-sidecar") as K8sObject & { data: Record<string, string> };
  const options = parseInjectionOptions(JSON.parse(cm.data["sidecar.json"]!), "sidecar.json");
  const pod: PodLike = {
    metadata: { namespace: "crew-a", labels: { "kubemoot.ai/inject": "true", "kubemoot.ai/agent": "a" } },
    spec: { containers: [{ name: "agent", image: "agent:1" }] },
  };
  const r = injectSidecar(pod, { namespace: "crew-a", name: "a", env: {} }, options);
  const add = r.patch.find((op) => (op as { path: string }).path.startsWith("/spec/initContainers")) as
    | { value: { env: EnvList } | { env: EnvList }[] }
    | undefined;
  const container = Array.isArray(add!.value) ? add!.value[0]! : add!.value;
  return Object.fromEntries(container.env.map((e) => [e.name, e.value]));
}

let validator: ObjectValidator;
async function expectValid(objs: K8sObject[]): Promise<void> {
  expect((await Promise.all(objs.map((o) => validator.validate(o)))).flat()).toEqual([]);
}

beforeAll(() => {
  validator = new ObjectValidator();
});

describe("least-privilege NATS users", () => {
  const set = [
    "nats.auth.enabled=true",
    `nats.auth.operator.nkey=${OP_NKEY}`,
    `nats.auth.operator.seed=${OP_SEED}`,
    `nats.auth.sidecars[0].nkey=${SC_NKEY}`,
    `nats.auth.sidecars[0].seed=${SC_SEED}`,
    "nats.auth.sidecars[0].namespaces={crew-a,crew-b}",
    `nats.auth.sidecars[1].nkey=${SC2_NKEY}`,
    "nats.auth.sidecars[1].namespaces={crew-c}",
    "sidecar.natsSecret.name=kubemoot-nats",
    "sidecar.natsSecret.credsKey=nats.nk",
  ];
  let objs: K8sObject[];
  let users: NatsUser[];
  beforeAll(() => {
    objs = renderChart({ set, includeCrds: false });
    users = usersOf(objs);
  });

  it("renders valid objects", async () => {
    await expectValid(objs);
  });

  it("one user per role: only the operator writes provider state and discussion bindings, and creates buckets", () => {
    expect(users.map((u) => u.nkey)).toEqual([OP_NKEY, SC_NKEY, SC2_NKEY]);
    const [op, ...sidecars] = users;
    expect(pub(op!)).toContain("$KV.kubemoot_provider_state.>");
    expect(pub(op!).filter((s) => s.startsWith("$KV."))).toEqual([
      "$KV.kubemoot_provider_state.>",
      "$KV.kubemoot_discussion_bindings.>",
    ]);
    expect(pub(op!).filter((s) => s.includes(".STREAM.CREATE."))).toHaveLength(4);
    for (const u of sidecars) {
      expect(pub(u).filter((s) => s.includes("kubemoot_provider_state") && !s.startsWith("$JS."))).toEqual(
        [],
      );
      expect(pub(u).filter((s) => s.includes(".STREAM.CREATE."))).toEqual([]);
      expect(
        pub(u).filter((s) => s.includes("kubemoot_discussion_bindings") && !s.startsWith("$JS.")),
      ).toEqual([]);
      // Discussion events on its own namespaces' subjects only (the default layout is scoped).
      const events = pub(u).filter((s) => s.startsWith("kubemoot.discussion."));
      expect(events.length).toBeGreaterThan(0);
      for (const s of events) expect(s).toMatch(/^kubemoot\.discussion\.[a-z0-9-]+\.\*\.\*$/);
      expect(u.permissions.subscribe.allow).toEqual(["_INBOX.>"]);
    }
    for (const u of users) {
      for (const s of pub(u)) {
        // No wildcard outside one bucket's own subjects (or one namespace token of the decision
        // records'), and nothing that deletes or purges.
        expect(s, s).toMatch(
          /^(\$JS\.API\.INFO|\$JS\.API\.[A-Z.]+\.KV_kubemoot_\w+(\.>)?|\$JS\.FC\.KV_kubemoot_\w+\.>|\$KV\.kubemoot_\w+\.([a-z]+(\.([*]|[a-z0-9-]+|claim|suspect))*(\.>)?|>)|kubemoot\.decisions\.([a-z0-9-]+|[*])|kubemoot\.discussion\.([a-z0-9-]+|[*])\.[*]\.[*])$/,
        );
        expect(s).not.toMatch(/DELETE\.KV_[^.]+$|PURGE|STREAM\.UPDATE|STREAM\.DELETE|MSG\.DELETE/);
      }
    }
  });

  it("every user reads the four buckets through the JetStream API, pull consumers' MSG.NEXT included", () => {
    const reads = BUCKETS.flatMap((b) => [
      `$JS.API.STREAM.INFO.KV_${b}`,
      `$JS.API.STREAM.MSG.GET.KV_${b}`,
      `$JS.API.CONSUMER.CREATE.KV_${b}.>`,
      `$JS.API.CONSUMER.MSG.NEXT.KV_${b}.>`,
      `$JS.FC.KV_${b}.>`,
    ]);
    for (const u of users) {
      expect(pub(u).filter((s) => s.startsWith("$JS.") && !s.includes(".STREAM.CREATE."))).toEqual([
        "$JS.API.INFO",
        ...reads,
      ]);
    }
  });

  it("scoped layout (the default): a sidecar user writes only its namespaces' tickets and demand, and the shared keys", () => {
    const writes = (u: NatsUser) => pub(u).filter((s) => s.startsWith("$KV."));
    expect(writes(users[1]!)).toEqual(scopedWrites(["crew-a", "crew-b"]));
    expect(writes(users[2]!)).toEqual(scopedWrites(["crew-c"]));
    // Nothing of another namespace, and no bucket-wide write.
    expect(writes(users[2]!).filter((s) => /crew-[ab]/.test(s) || s.endsWith("_tickets.>"))).toEqual([]);
    expect(writes(users[1]!).filter((s) => s.endsWith("_demand.>") || s.endsWith("_tickets.>"))).toEqual([]);
  });

  it("the key layout reaches the operator's container and, through the webhook, every sidecar", () => {
    expect(operatorEnv(objs).KUBEMOOT_KEY_LAYOUT).toBe("scoped");
    expect(injectedEnv(objs).KUBEMOOT_KEY_LAYOUT).toBe("scoped");
  });
  it("the authorization snippet carries the same users", () => {
    const secret = named(objs, "Secret", "-nats-authorization") as K8sObject & {
      stringData: Record<string, string>;
    };
    const conf = secret.stringData["authorization.conf"]!;
    expect(conf.startsWith("authorization: ")).toBe(true);
    expect(JSON.parse(conf.slice("authorization: ".length))).toEqual({ users });
    for (const seed of [OP_SEED, SC_SEED]) expect(conf).not.toContain(seed);
  });

  it("writes seeds into the operator's Secret and each listed namespace's sidecar Secret", () => {
    const op = named(objs, "Secret", "-nats-operator") as K8sObject & { stringData: Record<string, string> };
    expect(op.metadata.namespace).toBe("kubemoot");
    expect(op.stringData).toEqual({ "nats.creds": OP_SEED });
    const sidecar = only(objs, "Secret").filter((s) => s.metadata.name === "kubemoot-nats");
    expect(sidecar.map((s) => s.metadata.namespace).sort()).toEqual(["crew-a", "crew-b"]);
    for (const s of sidecar)
      expect((s as unknown as { stringData: object }).stringData).toEqual({ "nats.nk": SC_SEED });
    const d = only(objs, "Deployment")[0] as K8sObject & {
      spec: {
        template: {
          spec: {
            containers: { env: { name: string; value?: string }[] }[];
            volumes: { name: string; secret?: { secretName: string } }[];
          };
        };
      };
    };
    const env = d.spec.template.spec.containers[0]!.env;
    expect(env.find((e) => e.name === "KUBEMOOT_NATS_CREDS")?.value).toBe(
      "/etc/kubemoot/nats-creds/nats.creds",
    );
    expect(d.spec.template.spec.volumes.find((v) => v.name === "nats-creds")?.secret?.secretName).toBe(
      op.metadata.name,
    );
  });

  it("renders nothing of it by default, and refuses a half configuration", () => {
    const plain = renderChart({ includeCrds: false });
    expect(named(plain, "Secret", "-nats-authorization")).toBeUndefined();
    expect(renderError({ set: ["nats.auth.enabled=true"] })).toMatch(
      /nats\.auth\.operator\.nkey is required/,
    );
    expect(
      renderError({
        set: [
          "nats.auth.enabled=true",
          `nats.auth.operator.nkey=${OP_NKEY}`,
          `nats.auth.sidecars[0].nkey=${SC_NKEY}`,
          `nats.auth.sidecars[0].seed=${SC_SEED}`,
          "nats.auth.sidecars[0].namespaces={a}",
        ],
      }),
    ).toMatch(/needs sidecar\.natsSecret\.name/);
    expect(renderError({ set: ["nats.auth.operator.nkey=not-a-key"] })).toMatch(/nkey/);
  });
});

describe("NATS key layouts and sidecar namespaces", () => {
  const base = [
    "nats.auth.enabled=true",
    `nats.auth.operator.nkey=${OP_NKEY}`,
    `nats.auth.sidecars[0].nkey=${SC_NKEY}`,
    "nats.auth.sidecars[0].namespaces={crew-a}",
  ];

  it("nats.keyLayout=kubemoot: sidecar users keep bucket-wide writes; operator and sidecars get the layout", async () => {
    const objs = renderChart({ set: [...base, "nats.keyLayout=kubemoot"], includeCrds: false });
    await expectValid(objs);
    const [op, sidecar] = usersOf(objs);
    expect(pub(sidecar!).filter((s) => s.startsWith("$KV."))).toEqual([
      "$KV.kubemoot_provider_tickets.>",
      "$KV.kubemoot_model_demand.>",
    ]);
    expect(pub(op!).filter((s) => s.startsWith("$KV."))).toEqual([
      "$KV.kubemoot_provider_state.>",
      "$KV.kubemoot_discussion_bindings.>",
    ]);
    // The reads do not depend on the layout.
    expect(pub(sidecar!).filter((s) => s.includes("MSG.NEXT"))).toHaveLength(4);
    expect(operatorEnv(objs).KUBEMOOT_KEY_LAYOUT).toBe("kubemoot");
    expect(injectedEnv(objs).KUBEMOOT_KEY_LAYOUT).toBe("kubemoot");
  });

  it("without nats.auth the layout still reaches the operator and the sidecars", () => {
    const objs = renderChart({ set: ["nats.keyLayout=kubemoot"], includeCrds: false });
    expect(named(objs, "Secret", "-nats-authorization")).toBeUndefined();
    expect(operatorEnv(objs).KUBEMOOT_KEY_LAYOUT).toBe("kubemoot");
    expect(injectedEnv(objs).KUBEMOOT_KEY_LAYOUT).toBe("kubemoot");
  });

  it.each([
    ["Crew-A", "uppercase"],
    ["crew.a", "a dot (a subject token separator)"],
    ["crew_a", "an underscore"],
    ["-crew", "a leading dash"],
    ["*", "a subject wildcard"],
    [`c${"x".repeat(63)}`, "64 characters"],
  ])("the schema refuses sidecar namespace %j (%s)", (ns) => {
    const err = renderError({
      set: [
        "nats.auth.enabled=true",
        `nats.auth.operator.nkey=${OP_NKEY}`,
        `nats.auth.sidecars[0].nkey=${SC_NKEY}`,
      ],
      // --set would split a list on commas and parse the value; a JSON list is taken as is.
      setJson: [`nats.auth.sidecars[0].namespaces=${JSON.stringify([ns])}`],
    });
    expect(err).toMatch(/values don't meet the specifications of the schema/);
    expect(err).toMatch(/namespaces/);
  });

  it("the schema refuses a sidecar user without namespaces, a repeated namespace and an unknown layout", () => {
    expect(
      renderError({ set: [...base.slice(0, 3)], setJson: ["nats.auth.sidecars[0].namespaces=[]"] }),
    ).toMatch(/namespaces/);
    expect(
      renderError({ set: [...base.slice(0, 3)], setJson: ['nats.auth.sidecars[0].namespaces=["a","a"]'] }),
    ).toMatch(/namespaces/);
    expect(renderError({ set: [...base, "nats.keyLayout=flat"] })).toMatch(/keyLayout/);
  });

  it("the layout is set by nats.keyLayout only, not by either extraEnv", () => {
    for (const key of ["operator", "sidecar"]) {
      expect(
        renderError({
          set: [`${key}.extraEnv[0].name=KUBEMOOT_KEY_LAYOUT`, `${key}.extraEnv[0].value=kubemoot`],
        }),
        key,
      ).toMatch(/nats\.keyLayout/);
    }
  });
});

describe("TopologySource credentials: a namespaced Role, no ClusterRole on Secrets", () => {
  it("topology on: secrets only through a Role in the release namespace", async () => {
    const objs = renderChart({ set: ["operator.topology.enabled=true"], includeCrds: false });
    await expectValid(objs);
    for (const cr of only(objs, "ClusterRole") as Role[]) {
      for (const rule of cr.rules) expect(rule.resources, cr.metadata.name).not.toContain("secrets");
    }
    const role = named(objs, "Role", "-topology-secrets") as Role;
    expect(role.metadata.namespace).toBe("kubemoot");
    expect(role.rules).toEqual([{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }]);
    const binding = named(objs, "RoleBinding", "-topology-secrets") as K8sObject & {
      roleRef: { name: string };
      subjects: { namespace: string }[];
    };
    expect(binding.metadata.namespace).toBe("kubemoot");
    expect(binding.roleRef.name).toBe(role.metadata.name);
    expect(binding.subjects[0]!.namespace).toBe("kubemoot");
  });

  it("operator.topology.secretNames narrows the Role to those Secrets", () => {
    const objs = renderChart({
      set: ["operator.topology.enabled=true", "operator.topology.secretNames={inv-token}"],
      includeCrds: false,
    });
    expect((named(objs, "Role", "-topology-secrets") as Role).rules[0]!.resourceNames).toEqual(["inv-token"]);
  });

  it("operator.topology.allowedHosts reaches the operator's flags", () => {
    const objs = renderChart({
      set: [
        "operator.topology.enabled=true",
        "operator.topology.allowedHosts={inventory.example.com,*.corp.example}",
      ],
      includeCrds: false,
    });
    const d = only(objs, "Deployment")[0] as K8sObject & {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    const args = d.spec.template.spec.containers[0]!.args;
    expect(args.slice(args.indexOf("--topology-allowed-hosts"))).toEqual([
      "--topology-allowed-hosts",
      "inventory.example.com,*.corp.example",
    ]);
    expect(renderError({ set: ["operator.topology.allowedHosts={https://x}"] })).toMatch(/allowedHosts/);
  });

  it("topology off: no access to Secrets at all", () => {
    const objs = renderChart({ includeCrds: false });
    expect(named(objs, "Role", "-topology-secrets")).toBeUndefined();
  });
});

describe("NetworkPolicies", () => {
  const podLabels = (objs: K8sObject[]) =>
    (
      only(objs, "Deployment")[0] as K8sObject & {
        spec: { template: { metadata: { labels: Record<string, string> } } };
      }
    ).spec.template.metadata.labels;

  it("by default: the operator's pods take ingress only on the health and webhook ports; egress open", async () => {
    const objs = renderChart({ includeCrds: false });
    await expectValid(objs);
    const policies = only(objs, "NetworkPolicy") as Policy[];
    expect(policies.map((p) => p.metadata.name).sort()).toEqual([
      "kubemoot-kubemoot-scheduler-operator",
      "kubemoot-kubemoot-scheduler-webhook",
    ]);
    const labels = podLabels(objs);
    for (const p of policies) {
      for (const [k, v] of Object.entries(p.spec.podSelector.matchLabels)) expect(labels[k], k).toBe(v);
      expect(p.spec.policyTypes).toEqual(["Ingress"]);
      expect(p.spec.egress).toBeUndefined();
    }
    const ports = (p: Policy) => p.spec.ingress.flatMap((r) => r.ports.map((x) => x.port));
    expect(ports(named(objs, "NetworkPolicy", "-operator") as Policy)).toEqual(["health"]);
    expect(ports(named(objs, "NetworkPolicy", "-webhook") as Policy)).toEqual(["webhook"]);
    // The named ports exist on the operator's container.
    const container = (
      only(objs, "Deployment")[0] as K8sObject & {
        spec: { template: { spec: { containers: { ports: { name: string }[] }[] } } };
      }
    ).spec.template.spec.containers[0]!;
    expect(container.ports.map((p) => p.name).sort()).toEqual(["health", "webhook"]);
  });

  it("values narrow the webhook's sources, add egress rules, or turn them off", async () => {
    const objs = renderChart({
      includeCrds: false,
      set: [
        "networkPolicy.webhookFrom[0].ipBlock.cidr=10.0.0.0/24",
        "networkPolicy.egress[0].ports[0].port=4222",
        "networkPolicy.extraIngress[0].ports[0].port=9090",
      ],
    });
    await expectValid(objs);
    const webhook = named(objs, "NetworkPolicy", "-webhook") as Policy;
    expect(webhook.spec.ingress[0]!.from).toEqual([{ ipBlock: { cidr: "10.0.0.0/24" } }]);
    const op = named(objs, "NetworkPolicy", "-operator") as Policy;
    expect(op.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(op.spec.egress).toEqual([{ ports: [{ port: 4222 }] }]);
    expect(op.spec.ingress).toHaveLength(2);
    expect(
      only(renderChart({ includeCrds: false, set: ["networkPolicy.enabled=false"] }), "NetworkPolicy"),
    ).toEqual([]);
    const noHook = only(renderChart({ includeCrds: false, set: ["webhook.enabled=false"] }), "NetworkPolicy");
    expect(noHook.map((p) => p.metadata.name)).toEqual(["kubemoot-kubemoot-scheduler-operator"]);
  });
});
