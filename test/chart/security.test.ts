// The chart's trust boundary (docs/deploy.md "NATS credentials", "RBAC and network policies"),
// rendered by a real helm and validated against Kubernetes' schemas: least-privilege NATS
// users per role, TopologySource credential Secrets readable only in the release namespace
// through a Role, and NetworkPolicies for the operator and the webhook.
import { beforeAll, describe, expect, it } from "vitest";
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
    const secret = named(objs, "Secret", "-nats-authorization") as K8sObject & {
      stringData: Record<string, string>;
    };
    users = JSON.parse(secret.stringData["users.json"]!) as NatsUser[];
  });

  it("renders valid objects", async () => {
    await expectValid(objs);
  });

  it("one user per role: only the operator writes provider state and creates buckets", () => {
    expect(users.map((u) => u.nkey)).toEqual([OP_NKEY, SC_NKEY, SC2_NKEY]);
    const [op, ...sidecars] = users;
    const pub = (u: NatsUser) => u.permissions.publish.allow;
    expect(pub(op!)).toContain("$KV.kubemoot_provider_state.>");
    expect(pub(op!).filter((s) => s.startsWith("$KV."))).toEqual(["$KV.kubemoot_provider_state.>"]);
    expect(pub(op!).filter((s) => s.includes(".STREAM.CREATE."))).toHaveLength(3);
    for (const u of sidecars) {
      expect(
        pub(u)
          .filter((s) => s.startsWith("$KV."))
          .sort(),
      ).toEqual(["$KV.kubemoot_model_demand.>", "$KV.kubemoot_provider_tickets.>"]);
      expect(u.permissions.subscribe.allow).toEqual(["_INBOX.>"]);
    }
    for (const u of users) {
      for (const s of pub(u)) {
        // No wildcard outside one bucket's own subjects, and nothing that deletes or purges.
        expect(s, s).toMatch(
          /^(\$JS\.API\.INFO|\$JS\.API\.[A-Z.]+\.KV_kubemoot_\w+(\.>)?|\$JS\.FC\.KV_kubemoot_\w+\.>|\$KV\.kubemoot_\w+\.>)$/,
        );
        expect(s).not.toMatch(/DELETE\.KV_[^.]+$|PURGE|STREAM\.UPDATE|STREAM\.DELETE|MSG\.DELETE/);
      }
    }
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
