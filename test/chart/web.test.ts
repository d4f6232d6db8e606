// The operator's read-only web view in the chart (docs/deploy.md "The web view"): off by default;
// when on, a --web-listen flag, a named container port and a ClusterIP Service for
// `kubectl port-forward`; an optional token Secret mounted read-only; a refusal to expose the
// view beyond the loopback address without a token; a NetworkPolicy rule only for the sources
// listed; and NATS rights for the decision records sidecars publish and the view follows.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CHART_DIR, type K8sObject, renderChart, renderError, renderNotes } from "./render.js";
import { ObjectValidator } from "./validate.js";

const OP_NKEY = `U${"A".repeat(55)}`;
const SC_NKEY = `U${"B".repeat(55)}`;
const SC2_NKEY = `U${"C".repeat(55)}`;
const FULLNAME = "kubemoot-kubemoot-scheduler";
const TOKEN_DIR = "/var/run/kubemoot/web";
const EXPOSED = /operator\.web\.address .* needs operator\.web\.tokenSecret/;

interface Container {
  args: string[];
  ports: { name: string; containerPort: number; protocol?: string }[];
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}
type Deployment = K8sObject & {
  spec: {
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        containers: Container[];
        volumes: { name: string; secret?: { secretName: string; items?: { key: string; path: string }[] } }[];
      };
    };
  };
};
type Service = K8sObject & {
  spec: {
    type: string;
    selector: Record<string, string>;
    ports: { name: string; port: number; targetPort: string | number; protocol?: string }[];
  };
};
type Policy = K8sObject & {
  spec: { ingress: { ports: { port: string | number }[]; from?: unknown[] }[] };
};
interface NatsUser {
  nkey: string;
  permissions: { publish: { allow: string[] }; subscribe: { allow: string[] } };
}

const ON = ["operator.web.enabled=true"];
const WITH_TOKEN = [...ON, "operator.web.tokenSecret=kubemoot-web"];

const deployment = (objs: K8sObject[]) => objs.find((o) => o.kind === "Deployment") as Deployment;
const container = (objs: K8sObject[]) => deployment(objs).spec.template.spec.containers[0]!;
const webService = (objs: K8sObject[]) =>
  objs.find((o) => o.kind === "Service" && o.metadata.name === `${FULLNAME}-web`) as Service | undefined;
/** The value that follows `flag` in the operator's args, or undefined. */
function argOf(objs: K8sObject[], flag: string): string | undefined {
  const args = container(objs).args;
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
}

let validator: ObjectValidator;
async function expectValid(objs: K8sObject[]): Promise<void> {
  expect((await Promise.all(objs.map((o) => validator.validate(o)))).flat()).toEqual([]);
}

beforeAll(() => {
  validator = new ObjectValidator();
});

describe("the web view in the chart", () => {
  it("is off by default: no Service, no flag, no port, no token volume", () => {
    const values = parse(readFileSync(join(CHART_DIR, "values.yaml"), "utf8")) as {
      operator: { web?: unknown };
      networkPolicy: { webFrom?: unknown };
    };
    expect(values.operator.web).toEqual({
      enabled: false,
      address: "127.0.0.1",
      port: 8090,
      tokenSecret: "",
      traceUrl: "",
    });
    expect(values.networkPolicy.webFrom).toEqual([]);
    const objs = renderChart({ includeCrds: false });
    expect(webService(objs)).toBeUndefined();
    const c = container(objs);
    expect(c.args.filter((a) => a.startsWith("--web-"))).toEqual([]);
    expect(c.ports.map((p) => p.name)).not.toContain("web");
    expect(deployment(objs).spec.template.spec.volumes.map((v) => v.name)).not.toContain("web-token");
  });

  it("enabled: listens on 127.0.0.1:8090, declares the port and gets a ClusterIP Service for port-forward", async () => {
    const objs = renderChart({ set: ON, includeCrds: false });
    await expectValid(objs);
    expect(argOf(objs, "--web-listen")).toBe("127.0.0.1:8090");
    expect(container(objs).args).not.toContain("--web-token-file");
    expect(container(objs).ports).toContainEqual({ name: "web", containerPort: 8090, protocol: "TCP" });
    const svc = webService(objs)!;
    expect(svc).toBeDefined();
    expect(svc.metadata.namespace).toBe("kubemoot");
    expect(svc.spec.type).toBe("ClusterIP");
    expect(svc.spec.ports).toEqual([{ name: "web", port: 8090, targetPort: "web", protocol: "TCP" }]);
    // The Service selects the operator's pods (every replica serves the view, a standby too).
    const podLabels = deployment(objs).spec.template.metadata.labels;
    for (const [k, v] of Object.entries(svc.spec.selector)) expect(podLabels[k], k).toBe(v);
    expect(svc.metadata.labels?.["app.kubernetes.io/part-of"]).toBe("kubemoot");
  });

  it("a port of one's own; an IPv6 address is bracketed", () => {
    const objs = renderChart({ set: [...ON, "operator.web.port=9000"], includeCrds: false });
    expect(argOf(objs, "--web-listen")).toBe("127.0.0.1:9000");
    expect(webService(objs)!.spec.ports[0]!.port).toBe(9000);
    expect(container(objs).ports.find((p) => p.name === "web")?.containerPort).toBe(9000);
    const v6 = renderChart({ set: [...ON, "operator.web.address=::1"], includeCrds: false });
    expect(argOf(v6, "--web-listen")).toBe("[::1]:8090");
  });

  it("traceUrl: --web-trace-url as given; none when empty; a value without {traceId} refused", async () => {
    const url = "https://jaeger.example/trace/{traceId}";
    const objs = renderChart({ set: [...ON, `operator.web.traceUrl=${url}`], includeCrds: false });
    await expectValid(objs);
    expect(argOf(objs, "--web-trace-url")).toBe(url);
    expect(container(renderChart({ set: ON, includeCrds: false })).args).not.toContain("--web-trace-url");
    expect(() =>
      renderChart({
        set: [...ON, "operator.web.traceUrl=https://jaeger.example/trace/"],
        includeCrds: false,
      }),
    ).toThrow(/traceUrl/);
  });

  it("tokenSecret: only its key `token`, mounted read-only, and --web-token-file", async () => {
    const objs = renderChart({ set: WITH_TOKEN, includeCrds: false });
    await expectValid(objs);
    expect(argOf(objs, "--web-token-file")).toBe(`${TOKEN_DIR}/token`);
    expect(container(objs).volumeMounts).toContainEqual({
      name: "web-token",
      mountPath: TOKEN_DIR,
      readOnly: true,
    });
    expect(deployment(objs).spec.template.spec.volumes).toContainEqual({
      name: "web-token",
      secret: { secretName: "kubemoot-web", items: [{ key: "token", path: "token" }] },
    });
  });

  it("refuses an address beyond the loopback without a token; renders it with one", () => {
    for (const address of ["0.0.0.0", "10.1.2.3", "::"]) {
      const err = renderError({ set: [...ON, `operator.web.address=${address}`] });
      expect(err, address).toMatch(EXPOSED);
    }
    for (const address of ["127.0.0.1", "localhost", "::1"]) {
      expect(renderError({ set: [...ON, `operator.web.address=${address}`] }), address).toBeUndefined();
    }
    const objs = renderChart({ set: [...WITH_TOKEN, "operator.web.address=0.0.0.0"], includeCrds: false });
    expect(argOf(objs, "--web-listen")).toBe("0.0.0.0:8090");
    // Off, the block is not looked at.
    expect(renderError({ set: ["operator.web.address=0.0.0.0"] })).toBeUndefined();
  });

  it.each([
    [["operator.web.port=0"], "port"],
    [["operator.web.port=65536"], "port"],
    [["operator.web.address=a b"], "address"],
    [["operator.web.tokenSecret=Not_A_Name"], "tokenSecret"],
    [["operator.web.bind=x"], "bind"],
    [["networkPolicy.webFrom={x}"], "networkPolicy.webFrom.0"],
  ])("the schema refuses %j", (set, mention) => {
    const err = renderError({ set });
    expect(err).toMatch(/values don't meet the specifications of the schema/);
    expect(err).toContain(mention);
  });

  it("refuses a web port that another port of the operator already takes", () => {
    expect(renderError({ set: [...ON, "operator.web.port=8081"] })).toMatch(
      /operator\.web\.port must differ/,
    );
    expect(renderError({ set: [...ON, "operator.web.port=9443"] })).toMatch(
      /operator\.web\.port must differ/,
    );
    // Without the webhook its port is free.
    expect(renderError({ set: [...ON, "operator.web.port=9443", "webhook.enabled=false"] })).toBeUndefined();
  });
});

describe("the web view's NetworkPolicy rule", () => {
  const webRules = (objs: K8sObject[]) =>
    (objs.filter((o) => o.kind === "NetworkPolicy") as Policy[]).flatMap((p) =>
      p.spec.ingress.filter((r) => r.ports.some((x) => x.port === "web")),
    );

  it("none without networkPolicy.webFrom: port-forward reaches the pod's loopback through the kubelet", () => {
    expect(webRules(renderChart({ set: ON, includeCrds: false }))).toEqual([]);
  });

  it("networkPolicy.webFrom admits those sources on the web port only", async () => {
    const from = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } } };
    const objs = renderChart({
      set: [...WITH_TOKEN, "operator.web.address=0.0.0.0"],
      setJson: [`networkPolicy.webFrom=${JSON.stringify([from])}`],
      includeCrds: false,
    });
    await expectValid(objs);
    expect(webRules(objs)).toEqual([{ ports: [{ port: "web", protocol: "TCP" }], from: [from] }]);
    // Web off: webFrom opens nothing.
    const off = renderChart({
      setJson: [`networkPolicy.webFrom=${JSON.stringify([from])}`],
      includeCrds: false,
    });
    expect(webRules(off)).toEqual([]);
  });
});

describe("NATS rights for decision records", () => {
  const auth = [
    "nats.auth.enabled=true",
    `nats.auth.operator.nkey=${OP_NKEY}`,
    `nats.auth.sidecars[0].nkey=${SC_NKEY}`,
    "nats.auth.sidecars[0].namespaces={crew-a,crew-b}",
    `nats.auth.sidecars[1].nkey=${SC2_NKEY}`,
    "nats.auth.sidecars[1].namespaces={crew-c}",
  ];
  function users(layout: string): NatsUser[] {
    const objs = renderChart({ set: [...auth, `nats.keyLayout=${layout}`], includeCrds: false });
    const secret = objs.find((o) => o.kind === "Secret" && o.metadata.name.endsWith("-nats-authorization")) as
      | (K8sObject & { stringData: Record<string, string> })
      | undefined;
    return JSON.parse(secret!.stringData["users.json"]!) as NatsUser[];
  }
  const decisions = (subjects: string[]) => subjects.filter((s) => s.startsWith("kubemoot.decisions"));
  const discussions = (subjects: string[]) => subjects.filter((s) => s.startsWith("kubemoot.discussion."));

  it("scoped: each sidecar user publishes only its namespaces' subjects; the operator subscribes to all", () => {
    const [op, a, c] = users("scoped");
    expect(decisions(a!.permissions.publish.allow)).toEqual([
      "kubemoot.decisions.crew-a",
      "kubemoot.decisions.crew-b",
    ]);
    expect(decisions(c!.permissions.publish.allow)).toEqual(["kubemoot.decisions.crew-c"]);
    expect(discussions(a!.permissions.publish.allow)).toEqual([
      "kubemoot.discussion.crew-a.*.*",
      "kubemoot.discussion.crew-b.*.*",
    ]);
    expect(discussions(c!.permissions.publish.allow)).toEqual(["kubemoot.discussion.crew-c.*.*"]);
    expect(op!.permissions.subscribe.allow).toEqual([
      "_INBOX.>",
      "kubemoot.decisions.>",
      "kubemoot.discussion.*.*.*",
    ]);
    // The operator publishes no record; sidecars follow none.
    expect(decisions(op!.permissions.publish.allow)).toEqual([]);
    for (const u of [a!, c!]) expect(u.permissions.subscribe.allow).toEqual(["_INBOX.>"]);
  });

  it("kubemoot: sidecar users publish on any namespace's subject (one token); the operator subscribes to all", () => {
    const [op, a, c] = users("kubemoot");
    for (const u of [a!, c!]) {
      expect(decisions(u.permissions.publish.allow)).toEqual(["kubemoot.decisions.*"]);
      expect(discussions(u.permissions.publish.allow)).toEqual(["kubemoot.discussion.*.*.*"]);
      expect(u.permissions.subscribe.allow).toEqual(["_INBOX.>"]);
    }
    expect(op!.permissions.subscribe.allow).toEqual([
      "_INBOX.>",
      "kubemoot.decisions.>",
      "kubemoot.discussion.*.*.*",
    ]);
    expect(decisions(op!.permissions.publish.allow)).toEqual([]);
  });
});

describe("NOTES.txt", () => {
  it("off: says nothing of the web view; on: prints the port-forward command and the URL", () => {
    expect(renderNotes()).not.toMatch(/web view|port-forward/);
    const notes = renderNotes({ set: ON });
    expect(notes).toContain(`kubectl -n kubemoot port-forward svc/${FULLNAME}-web 8090`);
    expect(notes).toContain("http://127.0.0.1:8090/");
    expect(notes).not.toContain("?token=");
  });

  it("with a token: how to open the view once with ?token=", () => {
    const notes = renderNotes({ set: WITH_TOKEN });
    expect(notes).toContain("http://127.0.0.1:8090/?token=");
    expect(notes).toContain("kubectl -n kubemoot get secret kubemoot-web");
  });
});
