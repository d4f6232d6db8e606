// The operator process: a manifest source (a directory, or Kubernetes) feeding the reconcile
// loop (filter → score → bind), and the provider publisher probing the ModelProviders the
// source lists and writing kubemoot_provider_state; probed states flow back into binding
// (VRAM, loaded models) and into ModelProvider status.
import type { KubeConfig } from "@kubernetes/client-node";
import { ErrorCode, KubemootError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import { ProviderPublisher, type PublishedProvider, publishNeededFrom } from "../publisher/index.js";
import { DiscussionBindings, type StateStore } from "../state/index.js";
import { DiscussionBinder } from "./discussions/index.js";
import { FileFleet, KubernetesFleet, withExtraProviders } from "./fleet/index.js";
import { type HealthServer, startHealthServer } from "./health.js";
import { createKubernetesBinding, LeaderElector, loadKubeConfig } from "./kube/index.js";
import { type Reconciler, startReconciler } from "./reconcile/index.js";
import { createFileBinding, type ProviderInfo } from "./sources/index.js";
import { TopologySourceController } from "./topology/index.js";
import {
  type InjectionOptions,
  type InjectionWebhook,
  lookupFromAgents,
  startInjectionWebhook,
  withProviderEndpoints,
} from "./webhook/index.js";

export interface OperatorOptions {
  /** `--manifests` paths; empty = Kubernetes. */
  manifests: string[];
  /** Where the file sink writes binding files (manifests mode). */
  bindingsDir: string;
  state: StateStore;
  logger: Logger;
  /** Provider probe interval (ms); default 10 000. */
  probeIntervalMs?: number;
  /** Unschedulable retry (ms); default 30 000. */
  retryMs?: number;
  /**
   * Fleet placement of ModelDeployment replicas (docs/rules/fleet.md): manifests mode writes
   * `<bindingsDir>/fleet/`, Kubernetes mode writes ModelReplicas, deployment status and
   * ModelProviders (needs the fleet CRDs). Default false.
   */
  fleet?: boolean;
  /** With fleet: false retains existing replicas without placing new ones. Default true. */
  fleetFill?: boolean;
  /**
   * Kubernetes mode: track TopologySources (nodeLabels, ConfigMap and webhook arms), validate
   * their snapshots and write their status (needs the TopologySource CRD). Default false.
   */
  topology?: boolean;
  /**
   * The operator's own namespace (POD_NAMESPACE): TopologySource credentials are read only
   * from Secrets there. Default: the kubeconfig context's namespace, else "default".
   */
  namespace?: string;
  /** Hosts a webhook TopologySource may name; empty or absent: any. */
  topologyAllowedHosts?: readonly string[];
  /** Serve the sidecar-injection webhook (HTTPS) with these settings. */
  webhook?: {
    host: string;
    port: number;
    /** tls.crt + tls.key (re-read periodically: cert-manager rotates them). */
    certDir: string;
    injection: InjectionOptions;
    /**
     * Entries added to the KUBEMOOT_PROVIDER_ENDPOINTS each sidecar gets (the managed
     * ModelProviders' host:port always are), e.g. a pattern covering providers added later.
     */
    providerEndpoints?: string[];
  };
  /**
   * Kubernetes mode with several replicas: only the holder of this Lease reconciles, publishes
   * and serves the webhook; a standby answers /healthz but not /readyz (so the Service sends
   * the webhook's calls to the leader) and waits. A leader that loses its Lease calls
   * `onLeadershipLost` (the CLI exits, to restart as a standby).
   */
  leaderElection?: { namespace: string; name: string; identity: string; leaseDurationS: number };
  onLeadershipLost?: () => void;
  /** Serve /healthz and /readyz over plain HTTP here. */
  health?: { host: string; port: number };
  /** Kubernetes mode: the cluster to talk to; default the usual kubeconfig chain. */
  kubeConfig?: KubeConfig;
}

export interface RunningOperator {
  readonly reconciler: Reconciler;
  readonly publisher: ProviderPublisher;
  /** Fleet placement, when enabled. */
  readonly fleet: FileFleet | KubernetesFleet | undefined;
  /** TopologySource tracking, when enabled (Kubernetes mode). */
  readonly topology: TopologySourceController | undefined;
  /** The sidecar-injection webhook, when served. */
  readonly webhook: InjectionWebhook | undefined;
  /** The /healthz and /readyz server, when served. */
  readonly health: HealthServer | undefined;
  /** A ModelProvider's `gpu` label (what the web view calls its card), when it has one. */
  gpuLabel(provider: string): string | undefined;
  stop(): Promise<void>;
}

/** The publisher's view of a ModelProvider: probed VRAM wins, `memoryMiB` is the fallback. */
export function publishedProvider(p: ProviderInfo): PublishedProvider {
  return {
    name: p.name,
    endpoint: p.endpoint,
    totalVramMiB: p.memoryMiB ?? p.vramTotalMiB,
    maxParallel: p.maxParallel,
    contextLength: p.contextLength,
    // Absent for Ollama, so that an Ollama provider's probe config is what it always was.
    ...(p.engine !== "ollama" ? { engine: p.engine } : {}),
  };
}

export async function startOperator(o: OperatorOptions): Promise<RunningOperator> {
  const log = o.logger;
  let ready = false;
  const health = o.health ? await startHealthServer({ ...o.health, ready: () => ready }) : undefined;
  const publisher = new ProviderPublisher({
    sink: o.state.providerWriter,
    intervalMs: o.probeIntervalMs ?? 10_000,
    logger: log,
    // An unchanged probe is not rewritten, unless a reader's mark (a suspect mark, ...) needs
    // a newer probe time: read from the tickets bucket (docs/rules/state.md §2.2).
    publishNeeded: publishNeededFrom(() => o.state.tickets.everything()),
    onPublish: () => reconciler?.setProviderStates(publisher.states()),
    onFailingChange: () => discussions?.binder.setFailingProviders(publisher.failingProviders()),
  });
  const files = o.manifests.length > 0;
  const kubeConfig = files ? undefined : (o.kubeConfig ?? loadKubeConfig());
  const elector =
    o.leaderElection && kubeConfig
      ? new LeaderElector({ ...o.leaderElection, kubeConfig, logger: log })
      : undefined;
  if (elector) {
    log.info(
      { lease: `${o.leaderElection?.namespace}/${o.leaderElection?.name}` },
      "leader: waiting for the lease",
    );
    const won = await elector.acquire(() => {
      ready = false;
      o.onLeadershipLost?.();
    });
    if (!won) throw new KubemootError(ErrorCode.ShuttingDown, "stopped before acquiring leadership");
  }
  const binding = files
    ? createFileBinding({ manifests: o.manifests, outDir: o.bindingsDir, logger: log })
    : createKubernetesBinding({ logger: log, ...(kubeConfig ? { kubeConfig } : {}) });
  let fleet: FileFleet | KubernetesFleet | undefined;
  if (o.fleet && files) {
    fleet = new FileFleet({
      manifests: o.manifests,
      outDir: o.bindingsDir,
      logger: log,
      // The binder's source rescans the same files and says when they changed (below).
      rescanMs: 0,
      ...(o.fleetFill !== undefined ? { fill: o.fleetFill } : {}),
      onProviders: (list) => extras?.setExtraProviders(list),
    });
  } else if (o.fleet && kubeConfig) {
    fleet = new KubernetesFleet({
      kubeConfig,
      logger: log,
      ...(o.fleetFill !== undefined ? { fill: o.fleetFill } : {}),
    });
  }
  // Manifests mode has no API server to hold the ModelProviders fleet placement makes: the
  // binder's source carries them in memory instead, and tells the fleet when files change.
  const fileFleet = fleet instanceof FileFleet ? fleet : undefined;
  const extras = fileFleet
    ? withExtraProviders(binding.source, () => {
        fileFleet.refresh().catch((err: unknown) => log.error({ err: String(err) }, "fleet: refresh failed"));
      })
    : undefined;
  const source = extras ?? binding.source;
  const discussions = await startDiscussionBinder(o.state, log);
  let reconciler: Reconciler | undefined;
  let gpuLabels = new Map<string, string>();
  reconciler = await startReconciler({
    source,
    sink: binding.sink,
    logger: log,
    ...(o.retryMs !== undefined ? { retryMs: o.retryMs } : {}),
    engineMismatches: () => publisher.engineMismatches(),
    onResult: (r) => discussions?.binder.setSnapshot(r.snapshot),
    onProviders: (list) => {
      gpuLabels = new Map(list.flatMap((p) => (p.labels.gpu ? [[p.name, p.labels.gpu] as const] : [])));
      void publisher.setProviders(
        list.filter((p) => p.type === "ollama" || p.type === "").map(publishedProvider),
      );
    },
  });
  publisher.start();
  await fleet?.start();
  const topology =
    o.topology && kubeConfig
      ? new TopologySourceController({
          kubeConfig,
          logger: log,
          ...(o.namespace ? { secretNamespace: o.namespace } : {}),
          ...(o.topologyAllowedHosts ? { allowedHosts: o.topologyAllowedHosts } : {}),
        })
      : undefined;
  if (o.topology && files)
    log.warn({}, "--topology needs Kubernetes; in manifests mode use the topology dry run");
  await topology?.start();
  // Agents are looked up in the last bind result: a pod admitted before its Agent is bound is
  // left as it is, with an annotation saying why (the webhook's own rule).
  const webhook = o.webhook
    ? await startInjectionWebhook({
        host: o.webhook.host,
        port: o.webhook.port,
        certDir: o.webhook.certDir,
        injection: o.webhook.injection,
        logger: log,
        lookup: withProviderEndpoints(
          lookupFromAgents(() => reconciler?.lastResult?.bind.agents),
          () => reconciler?.providers().map((p) => p.endpoint) ?? [],
          o.webhook.providerEndpoints,
        ),
      })
    : undefined;
  ready = true;
  log.info(
    { source: o.manifests.length > 0 ? "manifests" : "kubernetes", providers: reconciler.providers().length },
    "operator started",
  );
  return {
    reconciler,
    publisher,
    fleet,
    topology,
    webhook,
    health,
    gpuLabel: (provider) => gpuLabels.get(provider),
    async stop() {
      ready = false;
      await webhook?.close();
      await topology?.stop();
      await fleet?.stop();
      await reconciler?.stop();
      await discussions?.stop();
      await publisher.stop();
      await elector?.stop();
      await health?.close();
    },
  };
}

/**
 * The discussion binder over the state's KV (docs/rules/binding.md §9), run where the reconciler
 * runs (the leader, standalone). A bucket that cannot be opened leaves discussions on their
 * agents' static candidates, with a warning: the operator's own work goes on.
 */
async function startDiscussionBinder(
  state: StateStore,
  log: Logger,
): Promise<{ binder: DiscussionBinder; stop(): Promise<void> } | undefined> {
  let bindings: DiscussionBindings;
  try {
    bindings = await DiscussionBindings.open(state.kv, 1, { logger: log });
  } catch (err) {
    log.warn({ err: String(err) }, "discussion bindings: bucket not opened; per-discussion binding is off");
    return undefined;
  }
  const binder = new DiscussionBinder({ bus: state.kv.messages, bindings, logger: log });
  binder.start();
  return {
    binder,
    async stop() {
      await binder.stop();
      await bindings.close();
    },
  };
}
