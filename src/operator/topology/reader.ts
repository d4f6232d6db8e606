// The read of each arm as one function, so the tracker does not care where text comes from.
import { ErrorCode, KubemootError } from "../../errors/index.js";
import type { TopologySourceArm } from "./arm.js";
import { type ConfigMapGetter, readConfigMapSnapshot } from "./configmap.js";
import type { SecretReader } from "./credential.js";
import { fetchWebhookSnapshot } from "./webhook.js";

/** Reads the snapshot document's text; throws (a KubemootError) on a read failure. */
export type SnapshotReader = (signal?: AbortSignal) => Promise<string>;

/** Where the operator's Kubernetes objects come from (informer caches, or manifests). */
export interface SnapshotReaderDeps {
  getConfigMap?: ConfigMapGetter;
  readSecret?: SecretReader;
}

/** The reader of an arm; undefined for nodeLabels, which has nothing to read. */
export function armReader(
  arm: TopologySourceArm,
  deps: SnapshotReaderDeps,
  field = `spec.${arm.kind}`,
): SnapshotReader | undefined {
  if (arm.kind === "nodeLabels") return undefined;
  if (arm.kind === "configMap") {
    const get = deps.getConfigMap ?? missing("getConfigMap");
    return async () => readConfigMapSnapshot(arm, get, field);
  }
  const readSecret = deps.readSecret ?? missing("readSecret");
  return async (signal) =>
    (
      await fetchWebhookSnapshot({
        url: arm.url,
        timeoutMs: arm.timeoutMs,
        caBundle: arm.caBundle,
        credential: arm.credential,
        readSecret,
        signal,
        field,
      })
    ).text;
}

function missing(what: string): () => never {
  return () => {
    // A wiring bug; thrown at read time so it shows in the source's status, not as a crash.
    throw new KubemootError(ErrorCode.Internal, `topology source reader: no ${what} was provided`);
  };
}
