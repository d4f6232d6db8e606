// The typed objects topology admission reads (docs/rules/topology.md) and the results it returns.
// Manifest readers (the dry run, later the operator's informers) turn documents into these;
// nothing here reads a clock or performs I/O.
import type { LabelSelector } from "../binding/index.js";

export type Labels = Readonly<Record<string, string>>;

/** Resource amounts in milli-units (cpu "500m" → 500, memory "1Gi" → 1073741824000, pods 1 → 1000). */
export type Resources = Readonly<Record<string, number>>;

export type SourceArm =
  | { kind: "nodeLabels" }
  | { kind: "configMap"; namespace: string; name: string; key: string; maxStaleness?: string }
  | {
      kind: "webhook";
      url: string;
      pollInterval: string;
      timeout: string;
      maxStaleness?: string;
      caBundle?: string;
    };

/** A TopologySource (kubemoot.ai/v1alpha1, cluster-scoped). */
export interface TopologySource {
  name: string;
  nodeSelector: LabelSelector;
  /** Label keys, coarsest first; `kubernetes.io/hostname` is implicit and never listed. */
  levels: readonly string[];
  /** One admin-owned `domain/` prefix the writing arms may also publish. */
  additionalWritePrefix?: string;
  arm: SourceArm;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface Toleration {
  key?: string;
  operator?: "Exists" | "Equal";
  value?: string;
  effect?: string;
}

/** A Node as admission sees it. */
export interface NodeState {
  name: string;
  labels: Labels;
  ready: boolean;
  unschedulable: boolean;
  taints: readonly Taint[];
  /** status.allocatable minus what pods already bound to the node request. */
  free: Resources;
}

/** How a gang asks for locality. */
export type TopologyRequest =
  | { mode: "required"; level: string }
  | { mode: "preferred"; level: string }
  | { mode: "unconstrained" };

/** One fate-sharing group of identical pods (one replica of one role). */
export interface Gang {
  /** `<ns>/<group>`. */
  key: string;
  size: number;
  /** Per pod, in milli-units; `pods: 1000` is added by the readers. */
  requests: Resources;
  topology: TopologyRequest;
  tolerations: readonly Toleration[];
  /** Hostnames preferred because they hold the gang's weights (never changes feasibility). */
  preferredNodes?: readonly string[];
}

/** Kueue's TopologyAssignment: domains at the profile's levels, in path order. */
export interface TopologyAssignment {
  levels: string[];
  domains: { values: string[]; count: number }[];
}

export type ExclusionReason = "NotReady" | "Unschedulable" | "Taint" | "MissingLabel";
