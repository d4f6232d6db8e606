// `kubemoot-scheduler operator` (docs/design.md §2, §7): the prober and publisher, the binder,
// and the optional fleet, topology, webhook, health and leader-election parts.
import { hostname } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { parseDuration } from "../../duration/index.js";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { parseEndpointAllowlist, parseHostPort } from "../../net/index.js";
import {
  DEFAULT_INJECTION_OPTIONS,
  loadInjectionOptions,
  parseAllowedHosts,
  type RunningOperator,
  startOperator,
} from "../../operator/index.js";
import { LEADER_ELECTION_SETTINGS, NATS_SETTINGS, readSetting, SETTINGS } from "../../settings/index.js";
import { openStateStore } from "../../state/index.js";
import { startWebView } from "../../web/index.js";
import { type Command, MIN_PROBE_INTERVAL_MS, numberFlag } from "../command.js";
import { settingFlags, settingFromFlag } from "../setting-flags.js";
import { natsStateOptions, stateFlags, stateTarget } from "../state-flags.js";
import { webLaunchFromFlags } from "../web-flags.js";

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
--health-listen serves /healthz and /readyz for the kubelet. With ${SETTINGS.leaderElect.name}=true
(Kubernetes mode) only the holder of a coordination.k8s.io Lease works; a standby is live but
not ready, and a leader that loses the Lease exits to restart as a standby.`,
  flags: {
    manifests: {
      type: "string",
      multiple: true,
      description: "read manifests from this directory (or file) instead of Kubernetes",
      value: "DIR",
    },
    ...settingFlags("operator", SETTINGS.bindingsDir),
    ...stateFlags("operator"),
    ...settingFlags("operator", SETTINGS.fleet, SETTINGS.topology, SETTINGS.topologyAllowedHosts),
    "no-fill": {
      type: "boolean",
      description: "with --fleet: retain existing replicas without placing new ones",
    },
    ...settingFlags(
      "operator",
      SETTINGS.webhookListen,
      SETTINGS.webhookCertDir,
      SETTINGS.webhookConfig,
      SETTINGS.sidecarProviderEndpoints,
      SETTINGS.healthListen,
      SETTINGS.webListen,
      SETTINGS.webTokenFile,
      SETTINGS.webTraceUrl,
    ),
    "probe-interval-ms": { type: "string", default: "10000", description: "provider probe interval" },
    ...settingFlags("operator", SETTINGS.logLevel),
  },
  env: [...NATS_SETTINGS, ...LEADER_ELECTION_SETTINGS],
  async run(flags) {
    const target = stateTarget(flags);
    const probeIntervalMs = numberFlag(flags, "probe-interval-ms", MIN_PROBE_INTERVAL_MS);
    const logger = pino({
      level: settingFromFlag(flags, SETTINGS.logLevel),
      base: { component: "operator" },
    });
    const webhookListen = settingFromFlag(flags, SETTINGS.webhookListen);
    const healthListen = settingFromFlag(flags, SETTINGS.healthListen);
    const webhookConfig = settingFromFlag(flags, SETTINGS.webhookConfig);
    const sidecarEndpoints = parseEndpointAllowlist(
      settingFromFlag(flags, SETTINGS.sidecarProviderEndpoints),
      "--sidecar-provider-endpoints",
    ).patterns;
    const webhook = webhookListen
      ? {
          ...parseHostPort("--webhook-listen", webhookListen),
          certDir: settingFromFlag(flags, SETTINGS.webhookCertDir),
          injection: webhookConfig ? loadInjectionOptions(webhookConfig) : DEFAULT_INJECTION_OPTIONS,
          providerEndpoints: [...sidecarEndpoints],
        }
      : undefined;
    const health = healthListen ? parseHostPort("--health-listen", healthListen) : undefined;
    const allowedHosts = parseAllowedHosts(
      settingFromFlag(flags, SETTINGS.topologyAllowedHosts),
      "--topology-allowed-hosts",
    );
    const leaderElection = leaderElectionFromEnv(process.env);
    // Checked (the token file read, the trace link template) before anything opens.
    const webLaunch = webLaunchFromFlags(flags);
    const state = await openStateStore(target === "memory" ? "memory" : target.split(","), {
      logger,
      ...natsStateOptions(),
    });
    let op: RunningOperator | undefined;
    // Every replica serves the view (it only reads), a standby waiting for its Lease included.
    const web = webLaunch.listen
      ? await startWebView({
          listen: webLaunch.listen,
          state,
          logger,
          ...(webLaunch.token !== undefined ? { token: webLaunch.token } : {}),
          ...(webLaunch.traceUrl ? { traceUrl: webLaunch.traceUrl } : {}),
          hub: { labelOf: (p) => op?.gpuLabel(p) },
        })
      : undefined;
    if (web) process.stdout.write(`kubemoot-scheduler operator: web view on ${web.url}\n`);
    op = await startOperator({
      manifests: (flags.manifests as string[] | undefined) ?? [],
      bindingsDir: path.resolve(settingFromFlag(flags, SETTINGS.bindingsDir)),
      state,
      logger,
      probeIntervalMs,
      fleet: settingFromFlag(flags, SETTINGS.fleet),
      fleetFill: flags["no-fill"] !== true,
      topology: settingFromFlag(flags, SETTINGS.topology),
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
    await web?.close();
    await op.stop();
    await state.close();
    return 0;
  },
};

/**
 * Leader election (the chart turns it on with more than one replica): the Lease of
 * LEADER_ELECTION_SETTINGS in their namespace (default POD_NAMESPACE), held by POD_NAME
 * (default the host).
 */
function leaderElectionFromEnv(
  env: NodeJS.ProcessEnv,
): { namespace: string; name: string; identity: string; leaseDurationS: number } | undefined {
  if (!readSetting(env, SETTINGS.leaderElect)) return undefined;
  const name = readSetting(env, SETTINGS.leaderElectionLease);
  const namespace = readSetting(env, SETTINGS.leaderElectionNamespace) || env.POD_NAMESPACE?.trim() || "";
  if (!namespace) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `${SETTINGS.leaderElectionNamespace.name}: set it (or POD_NAMESPACE) for leader election`,
    );
  }
  const durationMs = parseDuration(
    readSetting(env, SETTINGS.leaderElectionLeaseDuration),
    SETTINGS.leaderElectionLeaseDuration.name,
    { minMs: 2000 },
  );
  return {
    namespace,
    name,
    identity: env.POD_NAME?.trim() || hostname(),
    leaseDurationS: Math.ceil(durationMs / 1000),
  };
}
