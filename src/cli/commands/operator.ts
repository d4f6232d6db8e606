import { hostname } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { parseDuration } from "../../duration/index.js";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { parseEndpointAllowlist, parseHostPort } from "../../net/index.js";
import { startOperator } from "../../operator/index.js";
import { parseAllowedHosts } from "../../operator/topology/index.js";
import { DEFAULT_INJECTION_OPTIONS, loadInjectionOptions } from "../../operator/webhook/index.js";
import { openStateStore } from "../../state/index.js";
import { type Command, MIN_PROBE_INTERVAL_MS, numberFlag } from "../command.js";
import { natsStateOptions, stateTarget } from "../state-flags.js";

export const command: Command = {
  name: "operator",
  summary: "provider prober/publisher and agent binder; reads CRDs from Kubernetes, or a manifests directory",
  details: `With --manifests, the directory is read and watched; bindings (each agent's env,
candidate lists and status) are written under --bindings-dir. Without it, the operator reads
the kubemoot.ai CRDs from Kubernetes (KUBECONFIG, ~/.kube/config, or in-cluster) and patches
Agent status, agent Deployments' env and ModelProvider status, and posts FailedScheduling
events. In both modes it probes every ModelProvider and publishes kubemoot_provider_state.

With --fleet it also places ModelDeployment replicas onto InferenceClusters and pools
(docs/rules/fleet.md; the same decisions as the \`fleet\` dry run): in manifests mode it writes
<bindings-dir>/fleet/replicas.yaml and fleet/deployments.json; on Kubernetes it creates,
patches and deletes ModelReplicas and writes each ModelDeployment's ReplicasScheduled
condition (the fleet CRDs must be installed). A replica whose status is Ready with an address
becomes a ModelProvider (labelled app.kubernetes.io/managed-by: kubemoot-fleet), so placed
engines serve call-time scheduling.

With --topology (Kubernetes only) it tracks TopologySources: reads each source's arm (the
Nodes' labels, a ConfigMap, or an https webhook), validates every snapshot whole against the
Nodes (docs/rules/topology.md), keeps the last accepted one until maxStaleness, and writes the
source's status (ready, valid, reason, lastSuccessfulRevision, selectedNodes). A webhook's
credential Secret must be in the operator's own namespace (POD_NAMESPACE; default the
kubeconfig context's, else "default"); any other is refused (SecretNamespaceNotAllowed), and
so is a webhook host outside --topology-allowed-hosts when set (HostNotAllowed).

With --webhook-listen it serves the sidecar-injection webhook over HTTPS (tls.crt/tls.key from
--webhook-cert-dir, re-read every minute): pods labelled kubemoot.ai/inject: "true" get the
sidecar as a native sidecar with the env of their Agent's binding (docs/deploy.md).
--health-listen serves /healthz and /readyz for the kubelet. With KUBEMOOT_LEADER_ELECT=true
(Kubernetes mode) only the holder of a coordination.k8s.io Lease works; a standby is live but
not ready, and a leader that loses the Lease exits to restart as a standby.
NATS beyond its URL: KUBEMOOT_NATS_CREDS (a credentials file or an nkey seed), KUBEMOOT_NATS_TLS_CA,
KUBEMOOT_NATS_TLS_CERT + KUBEMOOT_NATS_TLS_KEY (files), KUBEMOOT_KV_REPLICAS (1, 3 or 5: the
replicas of the KV buckets the operator creates when missing).`,
  flags: {
    manifests: {
      type: "string",
      multiple: true,
      description: "read manifests from this directory (or file) instead of Kubernetes",
      value: "DIR",
    },
    "bindings-dir": {
      type: "string",
      default: ".kubemoot",
      env: "KUBEMOOT_BINDINGS_DIR",
      description: "where binding files are written in manifests mode",
      value: "DIR",
    },
    nats: {
      type: "string",
      env: "KUBEMOOT_NATS_URL",
      description: "NATS server URL(s), comma-separated",
      value: "URL",
    },
    state: {
      type: "string",
      default: "nats",
      env: "KUBEMOOT_STATE",
      description: "shared-state backend: nats, or memory (only useful in one process)",
      value: "memory|nats",
    },
    fleet: {
      type: "boolean",
      env: "KUBEMOOT_FLEET",
      description: "also place ModelDeployment replicas (fleet placement); default off",
    },
    topology: {
      type: "boolean",
      env: "KUBEMOOT_TOPOLOGY",
      description: "track TopologySources and write their status (Kubernetes mode); default off",
    },
    "topology-allowed-hosts": {
      type: "string",
      env: "KUBEMOOT_TOPOLOGY_ALLOWED_HOSTS",
      description:
        "hosts a webhook TopologySource may name (host, *.domain, host:port; comma-separated); empty: any",
      value: "HOSTS",
    },
    "no-fill": {
      type: "boolean",
      description: "with --fleet: retain existing replicas without placing new ones",
    },
    "webhook-listen": {
      type: "string",
      env: "KUBEMOOT_WEBHOOK_LISTEN",
      description: "serve the sidecar-injection webhook (HTTPS) here; empty: off",
      value: "HOST:PORT",
    },
    "webhook-cert-dir": {
      type: "string",
      default: "/etc/kubemoot/webhook-tls",
      env: "KUBEMOOT_WEBHOOK_CERT_DIR",
      description: "the webhook's tls.crt and tls.key",
      value: "DIR",
    },
    "webhook-config": {
      type: "string",
      env: "KUBEMOOT_WEBHOOK_CONFIG",
      description: "what the webhook injects (JSON: image, ports, resources, drain); default built in",
      value: "FILE",
    },
    "sidecar-provider-endpoints": {
      type: "string",
      env: "KUBEMOOT_SIDECAR_PROVIDER_ENDPOINTS",
      description:
        "entries added to each injected sidecar's KUBEMOOT_PROVIDER_ENDPOINTS (the ModelProviders' host:port always are): host[:port] patterns or CIDRs, comma-separated",
      value: "LIST",
    },
    "health-listen": {
      type: "string",
      env: "KUBEMOOT_HEALTH_LISTEN",
      description: "serve /healthz and /readyz (HTTP) here; empty: off",
      value: "HOST:PORT",
    },
    "probe-interval-ms": { type: "string", default: "10000", description: "provider probe interval" },
    "log-level": {
      type: "string",
      default: "info",
      env: "KUBEMOOT_LOG_LEVEL",
      description: "pino log level",
    },
  },
  async run(flags) {
    const target = stateTarget(flags);
    const probeIntervalMs = numberFlag(flags, "probe-interval-ms", MIN_PROBE_INTERVAL_MS);
    const logger = pino({ level: String(flags["log-level"]), base: { component: "operator" } });
    const webhookListen = typeof flags["webhook-listen"] === "string" ? flags["webhook-listen"].trim() : "";
    const healthListen = typeof flags["health-listen"] === "string" ? flags["health-listen"].trim() : "";
    const webhookConfig = typeof flags["webhook-config"] === "string" ? flags["webhook-config"].trim() : "";
    const sidecarEndpoints = parseEndpointAllowlist(
      String(flags["sidecar-provider-endpoints"] ?? ""),
      "--sidecar-provider-endpoints",
    ).patterns;
    const webhook = webhookListen
      ? {
          ...parseHostPort("--webhook-listen", webhookListen),
          certDir: String(flags["webhook-cert-dir"]),
          injection: webhookConfig ? loadInjectionOptions(webhookConfig) : DEFAULT_INJECTION_OPTIONS,
          providerEndpoints: [...sidecarEndpoints],
        }
      : undefined;
    const health = healthListen ? parseHostPort("--health-listen", healthListen) : undefined;
    const allowedHosts = parseAllowedHosts(
      typeof flags["topology-allowed-hosts"] === "string" ? flags["topology-allowed-hosts"] : "",
      "--topology-allowed-hosts",
    );
    const leaderElection = leaderElectionFromEnv(process.env);
    const state = await openStateStore(target === "memory" ? "memory" : target.split(","), {
      logger,
      ...natsStateOptions(),
    });
    const op = await startOperator({
      manifests: (flags.manifests as string[] | undefined) ?? [],
      bindingsDir: path.resolve(String(flags["bindings-dir"])),
      state,
      logger,
      probeIntervalMs,
      fleet: flags.fleet === true,
      fleetFill: flags["no-fill"] !== true,
      topology: flags.topology === true,
      ...(process.env.POD_NAMESPACE?.trim() ? { namespace: process.env.POD_NAMESPACE.trim() } : {}),
      ...(allowedHosts.length > 0 ? { topologyAllowedHosts: allowedHosts } : {}),
      ...(webhook ? { webhook } : {}),
      ...(health ? { health } : {}),
      ...(leaderElection
        ? {
            leaderElection,
            onLeadershipLost: () => {
              logger.error({}, "lost leadership: exiting so that this replica restarts as a standby");
              process.exit(1);
            },
          }
        : {}),
    });
    process.stdout.write("kubemoot-scheduler operator: running\n");
    await new Promise<void>((resolve) => {
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    });
    await op.stop();
    await state.close();
    return 0;
  },
};

/**
 * KUBEMOOT_LEADER_ELECT=true (the chart sets it with more than one replica), with the Lease
 * KUBEMOOT_LEADER_ELECTION_LEASE in KUBEMOOT_LEADER_ELECTION_NAMESPACE (default POD_NAMESPACE),
 * held for KUBEMOOT_LEADER_ELECTION_LEASE_DURATION (default 15s) by POD_NAME (default the host).
 */
function leaderElectionFromEnv(
  env: NodeJS.ProcessEnv,
): { namespace: string; name: string; identity: string; leaseDurationS: number } | undefined {
  const on = env.KUBEMOOT_LEADER_ELECT?.trim() ?? "";
  if (on === "" || /^(0|false|no)$/i.test(on)) return undefined;
  if (!/^(1|true|yes)$/i.test(on)) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `KUBEMOOT_LEADER_ELECT: expected true or false, got "${on}"`,
    );
  }
  const name = env.KUBEMOOT_LEADER_ELECTION_LEASE?.trim() || "kubemoot-operator-leader";
  const namespace = env.KUBEMOOT_LEADER_ELECTION_NAMESPACE?.trim() || env.POD_NAMESPACE?.trim() || "";
  if (!namespace) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      "KUBEMOOT_LEADER_ELECTION_NAMESPACE: set it (or POD_NAMESPACE) for leader election",
    );
  }
  const durationMs = parseDuration(
    env.KUBEMOOT_LEADER_ELECTION_LEASE_DURATION?.trim() || "15s",
    "KUBEMOOT_LEADER_ELECTION_LEASE_DURATION",
    { minMs: 2000 },
  );
  return {
    namespace,
    name,
    identity: env.POD_NAME?.trim() || hostname(),
    leaseDurationS: Math.ceil(durationMs / 1000),
  };
}
