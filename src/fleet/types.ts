// The fleet scheduler's typed inputs and outputs (docs/rules/fleet.md "Shapes"): what the manifest
// parser produces and what placeFleet consumes and returns. Plain data, no behaviour.

export type TaintEffect = "NoSchedule" | "PreferNoSchedule" | "NoExecute";

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
}

export interface Toleration {
  /** Empty or absent with operator Exists tolerates every key. */
  key?: string;
  operator: "Exists" | "Equal";
  value?: string;
  /** Absent tolerates every effect. */
  effect?: TaintEffect;
}

export interface DeviceRequest {
  name: string;
  count: number;
  /** CEL expressions, all of which must hold (AND). */
  selectors: string[];
}

export type MemberRole = "Standalone" | "Leader" | "Worker";

export interface Member {
  role: MemberRole;
  /** Worker only: pods of this member (1..63). */
  workerNodes?: number;
  /** Absent: the member claims nothing and fits any pool. */
  devices?: DeviceRequest[];
}

export interface Engine {
  name: string;
  copies: number;
  /**
   * docs/rules/topology.md: the engine's pods must share one domain at this level. The fleet places it
   * only on pools that publish a value for the level (GpuPool.topology), and spans pools only
   * within one fabric and one domain at the level.
   */
  requiredLevel?: string;
  members: Member[];
}

export interface ModelDeployment {
  namespace: string;
  name: string;
  replicas: number;
  clusterSelector: Record<string, string>;
  tolerations: Toleration[];
  engines: Engine[];
}

export type AttributeValue = { string: string } | { version: string } | { bool: boolean } | { int: number };

export interface Device {
  name: string;
  /** Synthetic devices match selectors but claim nothing. */
  claim: "DRA" | "Synthetic";
  driver: string;
  deviceClassName: string;
  /** Devices of this kind on one node; 0 when published as missing or negative. */
  count: number;
  /** Keyed `domain/id`, or a bare `id` in the driver's domain. */
  attributes: Record<string, AttributeValue>;
  /** Quantities, keyed like attributes. */
  capacity: Record<string, string>;
}

export interface FreeDevicesBucket {
  freeDevices: Record<string, number>;
  nodes: number;
}

export interface GpuPool {
  name: string;
  /** The most nodes the pool can have. */
  nodes: number;
  observedNodes?: number;
  /** The cluster agent's report; absent: count whole nodes. */
  nodesByFreeDevices?: FreeDevicesBucket[];
  devices: Device[];
  /** Devices come from this InferenceClass when the pool lists none. */
  inferenceClassName?: string;
  /** Level key → value (docs/rules/topology.md): pools sharing the fabric level's value form one fabric. */
  topology?: Record<string, string>;
}

export interface InferenceCluster {
  name: string;
  labels: Record<string, string>;
  taints: Taint[];
  ready: boolean;
  gatewayAddress?: string;
  /** The topology level key whose value names a pool's fabric domain (beyond upstream). */
  fabricLevel?: string;
  pools: GpuPool[];
}

export interface InferenceClass {
  name: string;
  devices: Device[];
}

export interface ReplicaDeviceRequest {
  name: string;
  deviceClassName: string;
  count: number;
  selectors: string[];
}

export interface ReplicaMember {
  role: MemberRole;
  workerNodes?: number;
  nodePoolName: string;
  deviceRequests: ReplicaDeviceRequest[];
}

export interface ReplicaEngine {
  name: string;
  copies: number;
  members: ReplicaMember[];
}

/** A ModelReplica, observed or emitted. */
export interface ModelReplica {
  namespace: string;
  name: string;
  /** `kubemoot.ai/deployment`: the owning deployment's name (same namespace). */
  deployment?: string;
  clusterName: string;
  index: number;
  engines: ReplicaEngine[];
  /**
   * Status condition ModelPodsScheduled is True: the pods hold their devices, so a pool's
   * nodesByFreeDevices report already counts them.
   */
  podsScheduled: boolean;
}

export interface FleetInput {
  deployments: readonly ModelDeployment[];
  clusters: readonly InferenceCluster[];
  classes?: readonly InferenceClass[];
  replicas: readonly ModelReplica[];
}

export interface FleetOptions {
  /** false: retain (and scale down) without placing new replicas. Default true. */
  fill?: boolean;
}

export interface Condition {
  type: "ReplicasScheduled";
  status: "True" | "False";
  reason: string;
  message: string;
}

export interface PlacedReplica extends ModelReplica {
  /** The cluster's gateway address; null when it publishes none. */
  gateway: string | null;
  /** Kept from the observed replicas (false: placed by this reconcile). */
  retained: boolean;
}

export interface DeploymentPlacement {
  namespace: string;
  name: string;
  /** Sorted by (cluster, index). */
  replicas: PlacedReplica[];
  conditions: Condition[];
  /** Selector compile errors, naming the field. */
  errors: string[];
}

export interface FleetResult {
  /** Sorted by namespace/name. */
  deployments: DeploymentPlacement[];
}
