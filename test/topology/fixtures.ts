// Shared builders for the topology unit tests: nodes in a block → rack → host tree.
import { buildCapacity, type Capacity } from "../../src/topology/capacity.js";
import { HOSTNAME, profileId } from "../../src/topology/levels.js";
import type { Gang, NodeState, Taint, TopologyRequest } from "../../src/topology/types.js";

export const BLOCK = "topology.kubemoot.ai/block";
export const RACK = "topology.kubemoot.ai/rack";
export const GPU = "nvidia.com/gpu";
export const TREE = [BLOCK, RACK, HOSTNAME];

export function node(
  name: string,
  block: string | undefined,
  rack: string | undefined,
  gpus: number,
  opts: { ready?: boolean; unschedulable?: boolean; taints?: Taint[]; hostname?: boolean } = {},
): NodeState {
  const labels: Record<string, string> = {};
  if (opts.hostname !== false) labels[HOSTNAME] = name;
  if (block !== undefined) labels[BLOCK] = block;
  if (rack !== undefined) labels[RACK] = rack;
  return {
    name,
    labels,
    ready: opts.ready ?? true,
    unschedulable: opts.unschedulable ?? false,
    taints: opts.taints ?? [],
    free: { [GPU]: gpus * 1000, pods: 110_000 },
  };
}

/** Capacity with every node in one profile of `levels`. */
export function capacityOf(nodes: readonly NodeState[], levels: readonly string[] = TREE): Capacity {
  const ref = { profile: profileId(levels), levels };
  return buildCapacity(nodes, new Map(nodes.map((n) => [n.name, ref])));
}

export function gang(size: number, gpus: number, topology: TopologyRequest, extra: Partial<Gang> = {}): Gang {
  return {
    key: "ml/g",
    size,
    requests: { [GPU]: gpus * 1000, pods: 1000 },
    topology,
    tolerations: [],
    ...extra,
  };
}
