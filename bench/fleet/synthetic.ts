// A seeded synthetic fleet for `bench fleet`: clusters of 8 GPU pools (half with the cluster
// agent's free-device report), and ModelDeployments whose members ask for GPUs by CEL over
// product name and memory, some as Leader + Worker gangs.
import type {
  Device,
  FreeDevicesBucket,
  GpuPool,
  InferenceCluster,
  Member,
  ModelDeployment,
} from "../../src/fleet/index.js";
import type { Random } from "../../src/prng/index.js";

const DRIVER = "gpu.nvidia.com";
const GPUS = [
  { product: "NVIDIA H100 80GB HBM3", memory: "80Gi", perNode: 8 },
  { product: "NVIDIA H200", memory: "141Gi", perNode: 8 },
  { product: "NVIDIA A100-SXM4-40GB", memory: "40Gi", perNode: 8 },
  { product: "NVIDIA L4", memory: "24Gi", perNode: 4 },
] as const;
const REGIONS = ["us-east", "us-west", "eu-central", "ap-south"];
const TIERS = ["prod", "prod", "prod", "staging"];
const POOLS_PER_CLUSTER = 8;

const pick = <T>(rng: Random, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const between = (rng: Random, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));

function gpuDevice(kind: (typeof GPUS)[number]): Device {
  return {
    name: "gpu",
    claim: "DRA",
    driver: DRIVER,
    deviceClassName: DRIVER,
    count: kind.perNode,
    attributes: { productName: { string: kind.product }, driverVersion: { version: "550.54.15" } },
    capacity: { memory: kind.memory },
  };
}

function makePool(rng: Random, index: number): GpuPool {
  const kind = GPUS[index % GPUS.length]!;
  const nodes = between(rng, 2, 16);
  const pool: GpuPool = { name: `pool-${index}`, nodes, devices: [gpuDevice(kind)] };
  if (rng() < 0.5) return pool;
  // The agent's report: most observed nodes partly used, the rest the pool may still grow by.
  const observed = between(rng, 1, nodes);
  const buckets = new Map<number, number>();
  for (let i = 0; i < observed; i++) {
    const free = between(rng, 0, kind.perNode);
    buckets.set(free, (buckets.get(free) ?? 0) + 1);
  }
  const nodesByFreeDevices: FreeDevicesBucket[] = [...buckets].map(([free, n]) => ({
    freeDevices: { [DRIVER]: free },
    nodes: n,
  }));
  return { ...pool, observedNodes: observed, nodesByFreeDevices };
}

export function makeClusters(rng: Random, count: number): InferenceCluster[] {
  return Array.from({ length: count }, (_, c): InferenceCluster => {
    const taints = rng() < 0.1 ? [{ key: "dedicated", value: "batch", effect: "NoSchedule" as const }] : [];
    return {
      name: `cluster-${String(c).padStart(4, "0")}`,
      labels: { tier: pick(rng, TIERS), region: pick(rng, REGIONS) },
      taints,
      ready: rng() < 0.95,
      gatewayAddress: `10.${c >> 8}.${c & 255}.1`,
      pools: Array.from({ length: POOLS_PER_CLUSTER }, (_, p) => makePool(rng, (p + c) % POOLS_PER_CLUSTER)),
    };
  });
}

const SELECTORS = [
  `device.capacity["${DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0`,
  `device.capacity["${DRIVER}"].memory.isGreaterThan(quantity("100Gi"))`,
  `device.attributes["${DRIVER}"].productName.startsWith("NVIDIA H")`,
  `device.attributes["${DRIVER}"].productName == "NVIDIA L4"`,
  `device.attributes["${DRIVER}"].driverVersion.isGreaterThan(semver("535.0.0"))`,
];

function makeMembers(rng: Random): Member[] {
  const selectors = [pick(rng, SELECTORS)];
  if (rng() < 0.2) {
    const count = pick(rng, [4, 8]);
    return [
      { role: "Leader", devices: [{ name: "gpu", count, selectors }] },
      { role: "Worker", workerNodes: between(rng, 1, 3), devices: [{ name: "gpu", count, selectors }] },
    ];
  }
  return [{ role: "Standalone", devices: [{ name: "gpu", count: pick(rng, [1, 1, 2, 4]), selectors }] }];
}

export function makeDeployments(rng: Random, count: number): ModelDeployment[] {
  return Array.from({ length: count }, (_, d): ModelDeployment => {
    const selector: Record<string, string> = { tier: rng() < 0.9 ? "prod" : "staging" };
    if (rng() < 0.3) selector.region = pick(rng, REGIONS);
    return {
      namespace: `team-${d % 20}`,
      name: `model-${String(d).padStart(4, "0")}`,
      replicas: between(rng, 1, 10),
      clusterSelector: selector,
      tolerations: rng() < 0.1 ? [{ key: "dedicated", operator: "Exists" }] : [],
      engines: Array.from({ length: rng() < 0.2 ? 2 : 1 }, (_, e) => ({
        name: `engine-${e}`,
        copies: rng() < 0.8 ? 1 : 2,
        members: makeMembers(rng),
      })),
    };
  });
}
