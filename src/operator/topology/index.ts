// TopologySource reading for the operator: the arms (nodeLabels, configMap, webhook), the
// guarded webhook fetch, a per-source tracker that keeps the last accepted snapshot and
// computes the status at a given time, and a poller that drives it. Snapshot validation is
// injected (the pure topology model owns it).

export { parseAllowedHosts } from "./allowed-hosts.js";
export { parseTopologySourceArm } from "./arm.js";
export { TopologySourceController } from "./controller.js";
export type { SecretObject, SecretReader, WebhookCredential } from "./credential.js";
export { type SnapshotVerdict, TopologySourceTracker } from "./tracker.js";
export { fetchWebhookSnapshot, MAX_SNAPSHOT_BYTES, type WebhookFetchOptions } from "./webhook.js";
