// The operator process: a manifest source (a directory, or Kubernetes) feeding the reconcile
// loop (filter → score → bind), and the provider publisher probing the ModelProviders the
// source lists and writing kubemoot_provider_state; probed states flow back into binding
// (VRAM, loaded models) and into ModelProvider status.
import type { Logger } from "pino";
import type { StateStore } from "../state/index.js";
import { ProviderPublisher, type PublishedProvider } from "./publisher/index.js";
import { type Reconciler, startReconciler } from "./reconcile/index.js";
import { createFileBinding, createKubernetesBinding, type ProviderInfo } from "./sources/index.js";

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
}

export interface RunningOperator {
  readonly reconciler: Reconciler;
  readonly publisher: ProviderPublisher;
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
  };
}

export async function startOperator(o: OperatorOptions): Promise<RunningOperator> {
  const log = o.logger;
  const publisher = new ProviderPublisher({
    sink: o.state.providerWriter,
    intervalMs: o.probeIntervalMs ?? 10_000,
    logger: log,
    onPublish: () => reconciler?.setProviderStates(publisher.states()),
  });
  const binding =
    o.manifests.length > 0
      ? createFileBinding({ manifests: o.manifests, outDir: o.bindingsDir, logger: log })
      : createKubernetesBinding({ logger: log });
  let reconciler: Reconciler | undefined;
  reconciler = await startReconciler({
    source: binding.source,
    sink: binding.sink,
    logger: log,
    ...(o.retryMs !== undefined ? { retryMs: o.retryMs } : {}),
    onProviders: (list) => {
      void publisher.setProviders(
        list.filter((p) => p.type === "ollama" || p.type === "").map(publishedProvider),
      );
    },
  });
  publisher.start();
  log.info(
    { source: o.manifests.length > 0 ? "manifests" : "kubernetes", providers: reconciler.providers().length },
    "operator started",
  );
  return {
    reconciler,
    publisher,
    async stop() {
      await reconciler?.stop();
      await publisher.stop();
    },
  };
}
