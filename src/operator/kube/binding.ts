// The Kubernetes side of the operator's reconcile loop: one KubeStore feeding the informer-backed
// manifest source and the status/env/Events sink (the contract is ../sources).
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../../log/index.js";
import type { BackoffOptions } from "./backoff.js";
import type { KubeApi } from "./client.js";
import { type KubeConfigOptions, loadKubeConfig } from "./config.js";
import { KubernetesManifestSource } from "./manifest-source.js";
import { KubernetesBindingSink } from "./sink.js";
import { KubeStore } from "./store.js";

export interface KubernetesBindingOptions {
  /** A loaded KubeConfig; else one is loaded with `kubeConfigOptions` (default chain). */
  kubeConfig?: KubeConfig;
  kubeConfigOptions?: KubeConfigOptions;
  /** Watch only these namespaces (default: all). */
  namespaces?: readonly string[];
  logger?: Logger;
  /** Watch restart backoff (default 500 ms doubling to 30 s, ±20 % jitter). */
  backoff?: BackoffOptions;
  /** A watch healthy this long resets its backoff; default 30 s. */
  stableMs?: number;
  /** Mirror FailedScheduling onto Agents too; default true. */
  agentEvents?: boolean;
  /** Post an ongoing event again after this long; default 10 min. */
  eventRepeatMs?: number;
  /** Minimum interval of lastProbedAt-only ModelProvider status writes; default 60 s. */
  probedAtRefreshMs?: number;
  /** Patch agent Deployments' env; default true. */
  deployments?: boolean;
  /** Replaces the client-node calls (tests). */
  api?: KubeApi;
}

export function createKubernetesBinding(o: KubernetesBindingOptions = {}): {
  source: KubernetesManifestSource;
  sink: KubernetesBindingSink;
  store: KubeStore;
} {
  const kubeConfig = o.kubeConfig ?? loadKubeConfig(o.kubeConfigOptions);
  const store = new KubeStore({
    kubeConfig,
    ...(o.api ? { api: o.api } : {}),
    ...(o.namespaces ? { namespaces: o.namespaces } : {}),
    ...(o.backoff ? { backoff: o.backoff } : {}),
    ...(o.stableMs !== undefined ? { stableMs: o.stableMs } : {}),
    ...(o.logger ? { logger: o.logger } : {}),
  });
  const source = new KubernetesManifestSource({ store, ...(o.logger ? { logger: o.logger } : {}) });
  const sink = new KubernetesBindingSink({
    store,
    ...(o.logger ? { logger: o.logger } : {}),
    ...(o.agentEvents !== undefined ? { agentEvents: o.agentEvents } : {}),
    ...(o.eventRepeatMs !== undefined ? { eventRepeatMs: o.eventRepeatMs } : {}),
    ...(o.probedAtRefreshMs !== undefined ? { probedAtRefreshMs: o.probedAtRefreshMs } : {}),
    ...(o.deployments !== undefined ? { deployments: o.deployments } : {}),
  });
  return { source, sink, store };
}
