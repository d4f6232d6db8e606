// TopologySource reading for the operator: the arms (nodeLabels, configMap, webhook), the
// guarded webhook fetch, a per-source tracker that keeps the last accepted snapshot and
// computes the status at a given time, and a poller that drives it. Snapshot validation is
// injected (the pure topology model owns it).

export { type DurationBounds, formatDuration, parseDuration } from "../../duration/index.js";
export { hostAllowed, parseAllowedHosts } from "./allowed-hosts.js";
export {
  type ConfigMapArm,
  type NodeLabelsArm,
  parseTopologySourceArm,
  type TopologySourceArm,
  type WebhookArm,
} from "./arm.js";
export {
  type ConfigMapArmRef,
  type ConfigMapGetter,
  type ConfigMapObject,
  readConfigMapSnapshot,
} from "./configmap.js";
export { TopologySourceController, type TopologySourceControllerOptions } from "./controller.js";
export {
  checkCredential,
  type ResolvedCredential,
  resolveCredential,
  type SecretKeyRef,
  type SecretObject,
  type SecretReader,
  type SecretRef,
  type WebhookCredential,
} from "./credential.js";
export { type ParsedDocument, parseSnapshotText } from "./document.js";
export {
  CONFIGMAP_RECHECK_MS,
  pollIntervalFor,
  startTopologySourcePoller,
  type TopologySourcePoller,
  type TopologySourcePollerOptions,
} from "./poller.js";
export { armReader, type SnapshotReader, type SnapshotReaderDeps } from "./reader.js";
export {
  type AcceptedSnapshot,
  type NodeLabelsCheck,
  type SnapshotValidator,
  type SnapshotVerdict,
  TopologySourceReason,
  type TopologySourceStatus,
  TopologySourceTracker,
  type TopologySourceTrackerOptions,
} from "./tracker.js";
export {
  checkWebhookUrl,
  fetchWebhookSnapshot,
  MAX_SNAPSHOT_BYTES,
  redactedUrl,
  type WebhookFetchOptions,
  type WebhookSnapshotBody,
} from "./webhook.js";
