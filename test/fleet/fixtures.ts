// Builders for the fleet's tests: small, explicit objects with the common defaults
// (one Standalone member claiming one GPU; a Ready cluster with a gateway).
import type {
  Device,
  Engine,
  GpuPool,
  InferenceCluster,
  Member,
  ModelDeployment,
  ModelReplica,
  ReplicaEngine,
} from "../../src/fleet/types.js";

export const GPU_DRIVER = "gpu.nvidia.com";

export function gpu(over: Partial<Device> = {}): Device {
  return {
    name: "gpu",
    claim: "DRA",
    driver: GPU_DRIVER,
    deviceClassName: GPU_DRIVER,
    count: 8,
    attributes: { productName: { string: "NVIDIA H100" } },
    capacity: { memory: "80Gi" },
    ...over,
  };
}

export function pool(name: string, over: Partial<GpuPool> = {}): GpuPool {
  return { name, nodes: 2, devices: [gpu()], ...over };
}

export function cluster(name: string, over: Partial<InferenceCluster> = {}): InferenceCluster {
  return {
    name,
    labels: {},
    taints: [],
    ready: true,
    gatewayAddress: `gw.${name}`,
    pools: [pool("default")],
    ...over,
  };
}

export function standalone(count = 1, selectors: string[] = []): Member {
  return { role: "Standalone", devices: [{ name: "gpu", count, selectors }] };
}

export function engine(over: Partial<Engine> = {}): Engine {
  return { name: "main", copies: 1, members: [standalone()], ...over };
}

export function deployment(name: string, over: Partial<ModelDeployment> = {}): ModelDeployment {
  return {
    namespace: "ns",
    name,
    replicas: 1,
    clusterSelector: {},
    tolerations: [],
    engines: [engine()],
    ...over,
  };
}

/** An observed replica of `deployment` with one engine "main", one Standalone on `pool`. */
export function replica(
  deployment: string,
  clusterName: string,
  index: number,
  over: Partial<ModelReplica> & { pool?: string; count?: number } = {},
): ModelReplica {
  const { pool: poolName = "default", count = 1, ...rest } = over;
  const engines: ReplicaEngine[] = [
    {
      name: "main",
      copies: 1,
      members: [
        {
          role: "Standalone",
          nodePoolName: poolName,
          deviceRequests: [{ name: "gpu", deviceClassName: GPU_DRIVER, count, selectors: [] }],
        },
      ],
    },
  ];
  return {
    namespace: "ns",
    name: `${deployment}-${clusterName}-${index}`,
    deployment,
    clusterName,
    index,
    engines,
    podsScheduled: false,
    ...rest,
  };
}
