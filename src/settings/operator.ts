// The operator's settings (docs/rules/binding.md, docs/deploy.md): where manifests mode writes
// bindings, the optional controllers (fleet placement, topology sources), the injection
// webhook, leader election, and the binder's capacity term that the `bind` dry run takes.
// Host lists and durations are checked by their own parsers where they are used
// (src/operator/topology, src/net, src/duration).
import {
  defineSetting,
  defineText,
  parseBoolean,
  parseChoice,
  type Setting,
  type SettingSpec,
} from "./setting.js";

function operatorText(
  name: string,
  o: Omit<SettingSpec<string>, "name" | "readBy" | "parseValue" | "type" | "default"> & {
    type?: Setting["type"];
    default?: string;
  },
): Setting<string> {
  return defineText({ name, readBy: ["operator"], ...o });
}

function operatorSwitch(name: string, flag: string | undefined, help: string): Setting<boolean> {
  return defineSetting({
    name,
    type: "boolean",
    default: false,
    help,
    readBy: ["operator"],
    ...(flag ? { flag } : {}),
    parseValue: parseBoolean,
  });
}

export const OPERATOR_SETTINGS = {
  bindingsDir: defineText({
    name: "KUBEMOOT_BINDINGS_DIR",
    type: "file",
    default: ".kubemoot",
    help: "where binding files are written (manifests mode)",
    readBy: ["operator", "standalone"],
    flag: "bindings-dir",
    placeholder: "DIR",
  }),
  fleet: operatorSwitch(
    "KUBEMOOT_FLEET",
    "fleet",
    "also place ModelDeployment replicas (fleet placement, docs/rules/fleet.md)",
  ),
  topology: operatorSwitch(
    "KUBEMOOT_TOPOLOGY",
    "topology",
    "track TopologySources and write their status (Kubernetes mode)",
  ),
  topologyAllowedHosts: operatorText("KUBEMOOT_TOPOLOGY_ALLOWED_HOSTS", {
    type: "list",
    help: "hosts a webhook TopologySource may name (host, *.domain, host:port; comma-separated); empty: any",
    flag: "topology-allowed-hosts",
    placeholder: "HOSTS",
  }),
  webhookListen: operatorText("KUBEMOOT_WEBHOOK_LISTEN", {
    type: "address",
    help: "serve the sidecar-injection webhook (HTTPS) here; empty: off",
    flag: "webhook-listen",
    placeholder: "HOST:PORT",
  }),
  webhookCertDir: operatorText("KUBEMOOT_WEBHOOK_CERT_DIR", {
    type: "file",
    default: "/etc/kubemoot/webhook-tls",
    help: "the webhook's tls.crt and tls.key (re-read every minute)",
    flag: "webhook-cert-dir",
    placeholder: "DIR",
  }),
  webhookConfig: operatorText("KUBEMOOT_WEBHOOK_CONFIG", {
    type: "file",
    help: "what the webhook injects (JSON: image, ports, resources, drain); default built in",
    flag: "webhook-config",
    placeholder: "FILE",
  }),
  sidecarProviderEndpoints: operatorText("KUBEMOOT_SIDECAR_PROVIDER_ENDPOINTS", {
    type: "list",
    help: "entries added to each injected sidecar's endpoint allowlist (the ModelProviders' host:port always are): host[:port] patterns or CIDRs, comma-separated",
    flag: "sidecar-provider-endpoints",
    placeholder: "LIST",
  }),
  leaderElect: operatorSwitch(
    "KUBEMOOT_LEADER_ELECT",
    undefined,
    "leader election (Kubernetes mode): only the holder of a coordination.k8s.io Lease works; a standby is live but not ready",
  ),
  leaderElectionLease: operatorText("KUBEMOOT_LEADER_ELECTION_LEASE", {
    default: "kubemoot-operator-leader",
    help: "the Lease's name",
  }),
  leaderElectionNamespace: operatorText("KUBEMOOT_LEADER_ELECTION_NAMESPACE", {
    defaultText: "POD_NAMESPACE",
    help: "the Lease's namespace (required for leader election when POD_NAMESPACE is unset)",
  }),
  leaderElectionLeaseDuration: operatorText("KUBEMOOT_LEADER_ELECTION_LEASE_DURATION", {
    type: "duration",
    default: "15s",
    help: "how long a Lease is held without renewal (a Go duration, at least 2s)",
  }),
  schedulerStrategy: defineSetting<"spread" | "binpack">({
    name: "KUBEMOOT_SCHEDULER_STRATEGY",
    type: "choice",
    default: "spread",
    help: "the binder's capacity term: spread favours free VRAM, binpack favours full cards",
    readBy: ["bind"],
    flag: "strategy",
    placeholder: "spread|binpack",
    parseValue: (raw, source) => parseChoice(raw, source, ["spread", "binpack"] as const),
  }),
} as const;
