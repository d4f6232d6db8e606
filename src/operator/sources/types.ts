// The two sides of the operator's reconcile loop, whatever the cluster is made of:
//
//   ManifestSource  where the objects come from (a directory of YAML, or Kubernetes informers);
//   BindingSink     where the binder's decisions go (binding files, or status patches, the agent
//                   Deployments' env and Events on the API server).
//
// The reconciler (../reconcile) builds a snapshot from the source, overlays the publisher's
// provider states, runs the pure `bind` and hands the result to the sink.
import type {
  AgentSchedulingStatus,
  BindResult,
  ClusterSnapshot,
  Condition,
  Labels,
} from "../../binding/index.js";
import type { Engine, ProviderState } from "../../core/index.js";

/** A ModelProvider as the provider publisher needs it: what to probe and how to weigh it. */
export interface ProviderInfo {
  /** The provider state key (`kubemoot_provider_state/<name>`). */
  name: string;
  /** Absent: cluster scope. */
  namespace?: string;
  /** Provider kind, `ollama`. */
  type: string;
  /** spec.engine: how it is probed (docs/rules/engines.md); default ollama. */
  engine: Engine;
  endpoint: string;
  /** spec.scheduling.weight, default 100. */
  weight: number;
  /** spec.scheduling.memoryMiB: VRAM to assume when no probe reports it. */
  memoryMiB?: number;
  /** Hints from the object's status.capacity (a manifest's, or the last published one). */
  maxParallel?: number;
  contextLength?: number;
  vramTotalMiB?: number;
  labels: Labels;
}

/** Why the source thinks a reconcile is due (for logs). */
export type ChangeListener = (reason: string) => void;

export interface ManifestSource {
  /** `files` or `kubernetes`, for logs. */
  readonly kind: string;
  /**
   * Who holds the agents' current status (the input of hysteresis and condition transitions):
   * `source` (Kubernetes: Agent.status as stored on the API server) or `reconciler` (files:
   * manifests carry no live status, so the reconciler remembers what it last wrote).
   */
  readonly statusAuthority: "source" | "reconciler";
  /** Loads the initial state (resolves once a first snapshot is available) and starts watching. */
  start(onChange: ChangeListener): Promise<void>;
  /** The objects as of now (provider states not applied). */
  snapshot(): ClusterSnapshot;
  /** The ModelProviders as of now, for the provider publisher. */
  providers(): ProviderInfo[];
  /** Re-reads what watching may have missed (the file source rescans); optional. */
  resync?(): Promise<void>;
  stop(): Promise<void>;
}

/** The part of Agent.status the operator owns. */
export interface AgentStatus {
  scheduling: AgentSchedulingStatus;
  conditions: Condition[];
}

/** Statuses remembered across runs, keyed `<ns>/<name>`. */
export interface RestoredStatus {
  agents: Map<string, AgentStatus>;
  policies: Map<string, { conditions: Condition[] }>;
}

export interface SinkContext {
  /** The snapshot bind ran on, provider states applied. */
  snapshot: ClusterSnapshot;
  /** The publisher's provider states, as last handed to the reconciler. */
  providerStates: readonly ProviderState[];
  /** Providers the publisher found to be another engine than declared, by name. */
  engineMismatches?: ReadonlyMap<string, { declared: string; detected: string }>;
  now: Date;
}

export interface SinkFailure {
  /** What was being written, e.g. `status Agent/crew/synth` or `file bindings/crew/synth.json`. */
  target: string;
  message: string;
}

/** What one write did; counts are of writes actually performed (unchanged things are skipped). */
export interface SinkReport {
  writes: number;
  skipped: number;
  failures: SinkFailure[];
  /** Per-kind counts for logs and tests, e.g. `{agentStatus: 1, deploymentEnv: 2, events: 1}`. */
  detail: Record<string, number>;
}

export interface BindingSink {
  readonly kind: string;
  /** Writes the result; only what changed since the last write. Never throws for one object. */
  write(result: BindResult, ctx: SinkContext): Promise<SinkReport>;
  /** Statuses of a previous run (the file sink reads its last output). */
  restore?(): Promise<RestoredStatus>;
  close?(): Promise<void>;
}

export function emptyReport(): SinkReport {
  return { writes: 0, skipped: 0, failures: [], detail: {} };
}

export function count(report: SinkReport, key: string, n = 1): void {
  report.detail[key] = (report.detail[key] ?? 0) + n;
}
