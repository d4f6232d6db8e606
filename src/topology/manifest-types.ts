// What the topology dry run reads from manifests (see manifests.ts): Nodes, Pods and
// ModelDeployments in the shapes the planner needs, and the Kueue labels gangs carry.
import type { Json } from "../manifests/index.js";
import type { Labels, Resources, Taint, Toleration, TopologySource } from "./types.js";

export const POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name";
export const POD_GROUP_TOTAL = "kueue.x-k8s.io/pod-group-total-count";
export const REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology";
export const PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology";
export const QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name";
/** What one engine device counts as, per pod (see README.md). */
export const GPU_RESOURCE = "nvidia.com/gpu";

export interface NodeManifest {
  name: string;
  labels: Labels;
  ready: boolean;
  unschedulable: boolean;
  taints: Taint[];
  allocatable: Resources;
}

export interface PodManifest {
  namespace: string;
  name: string;
  labels: Labels;
  annotations: Labels;
  nodeName?: string;
  phase?: string;
  requests: Resources;
  tolerations: Toleration[];
  /** The document as written, for --emit kueue. */
  raw: Json;
  ref: { file: string; document: number };
}

export interface EngineGangSpec {
  name: string;
  size: number;
  requests: Resources;
  requiredLevel: string;
}

export interface DeploymentManifest {
  namespace: string;
  name: string;
  replicas: number;
  tolerations: Toleration[];
  engines: EngineGangSpec[];
  createdAt?: number;
}

export interface TopologyManifests {
  nodes: NodeManifest[];
  pods: PodManifest[];
  configMaps: Map<string, Record<string, string>>;
  sources: TopologySource[];
  deployments: DeploymentManifest[];
  /** Existing Kueue Topologies by name → level keys (for drift detection). */
  kueueTopologies: Map<string, string[]>;
}
