// The typed objects the binder reads (docs/rules/binding.md "CRDs") and the results it returns.
// Sources (the manifests reader, later the Kubernetes informers) turn documents into these;
// the binder never sees YAML, never reads a clock and never performs I/O.
import type { Band, Engine } from "../core/index.js";

export type Labels = Readonly<Record<string, string>>;

/** One `matchExpressions` entry as written; the binder validates the operator and values. */
export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: readonly string[];
}

/** A Kubernetes label selector. Absent or empty selects everything. */
export interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: readonly LabelSelectorRequirement[];
}

export interface ObjectRef {
  /** Absent for cluster-scoped objects. */
  namespace?: string;
  name: string;
}

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  /** RFC 3339. */
  lastTransitionTime: string;
}

export interface Model {
  /** Absent: cluster scope (visible from every namespace, after the agent's and `kubemoot`). */
  namespace?: string;
  name: string;
  /** What the model is: family, params, capability/<name>, contextWindow, latencyClass. */
  labels: Labels;
  spec: {
    /** The model id on the provider, e.g. qwen3:32b. */
    model: string;
    providerRef: string;
    /** Declared VRAM; absent = undeclared (fits everywhere, sorts after declared on ties). */
    vramMib?: number;
  };
  status: { ready: boolean };
}

export interface LoadedModel {
  name: string;
  sizeMiB?: number;
  contextLength?: number;
}

export interface ProviderCapacity {
  vramTotalMiB?: number;
  vramUsedMiB?: number;
  maxParallel?: number;
  agentCount?: number;
  contextLength?: number;
  loadedModels?: readonly LoadedModel[];
}

export interface ModelProvider {
  /** Absent: cluster scope. */
  namespace?: string;
  name: string;
  labels: Labels;
  spec: {
    type: string;
    /** The serving engine (docs/rules/engines.md); absent = ollama. */
    engine?: Engine;
    endpoint: string;
    scheduling?: {
      /** Phase-aware weight: mulling +weight, triage −weight. Default 100. */
      weight?: number;
      /** VRAM when no probe reports it. */
      memoryMiB?: number;
    };
  };
  status: { ready: boolean; capacity?: ProviderCapacity };
}

/** One phase of `Agent.status.scheduling` (and of its `triage`). */
export interface PhaseAssignment {
  /** spec.model of the bound Model (the id on the provider). */
  model: string;
  /** The bound Model's name. */
  modelRef?: string;
  provider: string;
  endpoint: string;
}

export interface LastUnschedulable {
  phase: string;
  reason: string;
  observedAt: string;
  /** The governing policy's name; absent when no policy applies to the agent. */
  crewSchedulingPolicy?: string;
}

export interface AgentSchedulingStatus extends Partial<PhaseAssignment> {
  triage?: PhaseAssignment;
  lastUnschedulable?: LastUnschedulable;
}

export interface Agent {
  namespace: string;
  name: string;
  labels: Labels;
  spec: {
    capabilities: readonly string[];
    /** coordinator, tooler, analyst, … (coordinators take no load penalty). */
    discussRole?: string;
  };
  status?: { scheduling?: AgentSchedulingStatus; conditions?: readonly Condition[] };
}

export interface PreferTerm {
  weight: number;
  selector: LabelSelector;
}

export interface SchedulingRule {
  phase: string;
  require?: LabelSelector;
  prefer?: readonly PreferTerm[];
}

export type WhenUnsatisfiable = "ScheduleAnyway" | "DoNotSchedule";

export interface TopologySpread {
  whenUnsatisfiable: WhenUnsatisfiable;
  /** `provider`, or the key of a ModelProvider label. */
  topologyKey: string;
  phaseKeys: readonly string[];
}

/** A crew's share weight and bands (docs/rules/fairness.md §2); each optional. */
export interface FairShareSpec {
  /** KUBEMOOT_CREW_WEIGHT: an integer ≥ 1. */
  weight?: number;
  /** KUBEMOOT_PRIORITY: the band of the crew's calls that name none. */
  priority?: Band;
  /** KUBEMOOT_CREW_MAX_PRIORITY: the highest band its calls may ask for. */
  maxPriority?: Band;
}

export interface CrewSchedulingPolicy {
  namespace: string;
  name: string;
  spec: {
    crewRef: string;
    archetypeRef: string;
    /** Capability → bias in [0,1] as a string, plus `default`. */
    qualityBias: Readonly<Record<string, string>>;
    rules: readonly SchedulingRule[];
    topologySpread?: TopologySpread;
    /** The crew's fair share (docs/rules/fairness.md §2), written into its agents' env. */
    fairShare?: FairShareSpec;
  };
  status?: { conditions?: readonly Condition[] };
}

export interface ArchetypePhase {
  name: string;
  description?: string;
}

export interface MootArchetype {
  name: string;
  spec: { description?: string; phases: readonly ArchetypePhase[] };
}

/** Everything the binder decides on, as read by a source at one moment. */
export interface ClusterSnapshot {
  models: readonly Model[];
  providers: readonly ModelProvider[];
  agents: readonly Agent[];
  policies: readonly CrewSchedulingPolicy[];
  archetypes: readonly MootArchetype[];
}

export type CapacityStrategy = "spread" | "binpack";

export interface BindOptions {
  /** `KubemootConfig.scheduler.strategy`. Default spread. */
  strategy?: CapacityStrategy;
  /** Parallelism headroom factor; default 8, 0 turns the check off. */
  concurrencyFactor?: number;
  /** Added to a Model's vramMib in the VRAM headroom check; default 0. */
  evictionOverheadMiB?: number;
  /** The time the result is observed at (lastUnschedulable.observedAt, condition transitions). */
  now: Date;
}

// ---- results ----------------------------------------------------------------------------

/** A candidate model of one phase: its quality score (prefer sum + quality-bias term). */
export interface Candidate {
  model: string;
  score: number;
}

export interface PhaseBinding extends PhaseAssignment {
  modelRef: string;
  score: number;
  /** The bound provider's engine (docs/rules/engines.md). */
  engine: Engine;
  /** Namespaces of the bound Model and provider (absent: cluster scope). */
  modelNamespace?: string;
  providerNamespace?: string;
  /** Triage only: no feasible pick of its own, so the mulling pick was taken. */
  fallback?: boolean;
}

export interface Unschedulable {
  phase: string;
  reason: string;
}

export interface SchedulingEvent {
  type: "Warning" | "Normal";
  reason: string;
  /** `<kind>/<ns>/<name>`, or `<kind>/<name>` for cluster-scoped objects. */
  object: string;
  message: string;
}

export interface AgentResult {
  /** `<ns>/<name>`. */
  key: string;
  namespace: string;
  name: string;
  /** The policy that governed the agent, when one did. */
  policy?: ObjectRef;
  phases: { mulling?: PhaseBinding; triage?: PhaseBinding };
  candidates: { mulling: Candidate[]; triage: Candidate[] };
  unschedulable: Unschedulable[];
  /** What the operator writes to Agent.status. */
  status: { scheduling: AgentSchedulingStatus; conditions: Condition[] };
  /** The agent Deployment's env (KUBEMOOT_MODEL_*, KUBEMOOT_TRIAGE_*, candidate lists). */
  env: Record<string, string>;
}

export interface PolicyResult {
  namespace: string;
  name: string;
  /** Problems with the policy itself (invalid selectors, unknown phases, …), one line each. */
  problems: string[];
  /** Rule phases the archetype does not declare. */
  unknownPhases: string[];
  /** Agents governed by the policy, and how many of them have an unschedulable phase. */
  agents: number;
  unschedulableAgents: number;
  status: { conditions: Condition[]; unknownPhases: string[] };
}

export interface BindResult {
  /** Sorted by key. */
  agents: AgentResult[];
  /** Sorted by namespace/name. */
  policies: PolicyResult[];
  events: SchedulingEvent[];
}
