// Manifest sources and binding sinks for the operator's reconcile loop (../reconcile):
//
//   createFileBinding({manifests, outDir})   --manifests DIR: YAML in, binding files out
//   createKubernetesBinding({kubeConfig})    Kubernetes: informers in, status/env/Events out
//
// Both return {source, sink} for startReconciler.
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../../log/index.js";
import type { BackoffOptions } from "../kube/backoff.js";
import type { KubeApi } from "../kube/client.js";
import { type KubeConfigOptions, loadKubeConfig } from "../kube/config.js";
import { KubernetesBindingSink } from "../kube/sink.js";
import { KubeStore } from "../kube/store.js";
import { FileBindingSink } from "./file-sink.js";
import { FileManifestSource } from "./files.js";
import { KubernetesManifestSource } from "./kubernetes.js";

export {
  type AgentBindingFile,
  agentBindingFile,
  atomicWrite,
  BINDING_FILE_VERSION,
  BINDINGS_DIR,
  BINDINGS_FILE,
  type BindingsFile,
  bindingFilePath,
  bindingsFile,
  FileBindingSink,
  type FileSinkOptions,
  type PolicyBindingStatus,
  readBindingFile,
} from "./file-sink.js";
export {
  DEFAULT_DEBOUNCE_MS,
  DEFAULT_RESCAN_MS,
  FileManifestSource,
  type FileSourceOptions,
} from "./files.js";
export { KubernetesManifestSource, type KubernetesSourceOptions } from "./kubernetes.js";
export { providerInfos } from "./providers.js";
export type {
  AgentStatus,
  BindingSink,
  ChangeListener,
  ManifestSource,
  ProviderInfo,
  RestoredStatus,
  SinkContext,
  SinkFailure,
  SinkReport,
} from "./types.js";

export interface FileBindingOptions {
  /** `--manifests` paths (directories read recursively, or files). */
  manifests: readonly string[];
  /** Where binding files are written (`<outDir>/bindings/<ns>/<agent>.json`, `<outDir>/bindings.json`). */
  outDir: string;
  logger?: Logger;
  /** Watch-event debounce; default 100 ms. */
  debounceMs?: number;
  /** Periodic rescan; default 5 s; 0 turns it off. */
  rescanMs?: number;
  /** fs.watch the manifests; default true. */
  watch?: boolean;
}

/** The file source and sink; the output directory is never read as manifests. */
export function createFileBinding(o: FileBindingOptions): {
  source: FileManifestSource;
  sink: FileBindingSink;
} {
  const source = new FileManifestSource({
    paths: o.manifests,
    ignore: [o.outDir],
    ...(o.logger ? { logger: o.logger } : {}),
    ...(o.debounceMs !== undefined ? { debounceMs: o.debounceMs } : {}),
    ...(o.rescanMs !== undefined ? { rescanMs: o.rescanMs } : {}),
    ...(o.watch !== undefined ? { watch: o.watch } : {}),
  });
  const sink = new FileBindingSink({ dir: o.outDir, ...(o.logger ? { logger: o.logger } : {}) });
  return { source, sink };
}

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
