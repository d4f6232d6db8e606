// Public API of topology-aware admission (docs/rules/topology.md): pure functions from sources,
// Nodes and gangs to profiles, capacity trees and admission decisions. The operator's source
// controllers call validateSnapshot; the `topology` CLI calls parse → planTopology → toDryRun
// or toKueue.
export { admitGang } from "./admit.js";
export { buildCapacity, reserve } from "./capacity.js";
export { type DryRunOutput, planTopology, toDryRun } from "./dry-run.js";
export { toKueue } from "./kueue.js";
export { HOSTNAME, profileId, ZONE } from "./levels.js";
export { parseTopologyManifests } from "./manifests.js";
export { validateSnapshot } from "./snapshot.js";
export { evaluateSource } from "./sources.js";
export type { Gang, NodeState, TopologySource } from "./types.js";
