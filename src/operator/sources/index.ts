// The two sides of the operator's reconcile loop (../reconcile), and their file implementation:
//
//   createFileBinding({manifests, outDir})   --manifests DIR: YAML in, binding files out
//
// The Kubernetes implementation (informers in, status/env/Events out) is ../kube's
// createKubernetesBinding; it depends on this contract, never the other way.
import type { Logger } from "../../log/index.js";
import { FileBindingSink } from "./file-sink.js";
import { FileManifestSource } from "./files.js";

export { type AgentBindingFile, atomicWrite, type BindingsFile, readBindingFile } from "./file-sink.js";
export { providerInfos } from "./providers.js";
export type {
  AgentStatus,
  BindingSink,
  ChangeListener,
  ManifestSource,
  ProviderInfo,
  SinkContext,
  SinkReport,
} from "./types.js";
export { count, emptyReport } from "./types.js";

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
