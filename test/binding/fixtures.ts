// Builders for binder tests: small objects with the defaults a test does not care about.
// Models and providers default to the `kubemoot` namespace, agents and policies to `crew`.
import type {
  Agent,
  AgentSchedulingStatus,
  ClusterSnapshot,
  CrewSchedulingPolicy,
  Labels,
  Model,
  ModelProvider,
  SchedulingRule,
  TopologySpread,
} from "../../src/binding/index.js";
import type { PhaseContext } from "../../src/binding/plugin.js";
import { compilePolicy, ruleFor } from "../../src/binding/policy.js";

export const NOW = new Date("2026-05-15T15:30:00Z");

export interface ModelOpts {
  id?: string;
  provider?: string;
  labels?: Labels;
  vramMib?: number;
  ready?: boolean;
  namespace?: string | null;
}

export function model(name: string, o: ModelOpts = {}): Model {
  return {
    ...(o.namespace === null ? {} : { namespace: o.namespace ?? "kubemoot" }),
    name,
    labels: o.labels ?? {},
    spec: {
      model: o.id ?? name,
      providerRef: o.provider ?? "gpu-a",
      ...(o.vramMib !== undefined ? { vramMib: o.vramMib } : {}),
    },
    status: { ready: o.ready ?? true },
  };
}

export interface ProviderOpts {
  endpoint?: string;
  weight?: number;
  memoryMiB?: number;
  ready?: boolean;
  vramTotalMiB?: number;
  vramUsedMiB?: number;
  maxParallel?: number;
  agentCount?: number;
  loaded?: [string, number][];
  labels?: Labels;
  namespace?: string | null;
}

export function provider(name: string, o: ProviderOpts = {}): ModelProvider {
  return {
    ...(o.namespace === null ? {} : { namespace: o.namespace ?? "kubemoot" }),
    name,
    labels: o.labels ?? {},
    spec: {
      type: "ollama",
      endpoint: o.endpoint ?? `http://${name}:11434`,
      ...(o.weight !== undefined || o.memoryMiB !== undefined
        ? {
            scheduling: {
              ...(o.weight !== undefined ? { weight: o.weight } : {}),
              ...(o.memoryMiB !== undefined ? { memoryMiB: o.memoryMiB } : {}),
            },
          }
        : {}),
    },
    status: {
      ready: o.ready ?? true,
      capacity: {
        ...(o.vramTotalMiB !== undefined ? { vramTotalMiB: o.vramTotalMiB } : {}),
        ...(o.vramUsedMiB !== undefined ? { vramUsedMiB: o.vramUsedMiB } : {}),
        ...(o.maxParallel !== undefined ? { maxParallel: o.maxParallel } : {}),
        ...(o.agentCount !== undefined ? { agentCount: o.agentCount } : {}),
        ...(o.loaded ? { loadedModels: o.loaded.map(([n, sizeMiB]) => ({ name: n, sizeMiB })) } : {}),
      },
    },
  };
}

export interface AgentOpts {
  caps?: string[];
  role?: string;
  crew?: string | null;
  namespace?: string;
  scheduling?: AgentSchedulingStatus;
}

export function agent(name: string, o: AgentOpts = {}): Agent {
  return {
    namespace: o.namespace ?? "crew",
    name,
    labels: o.crew === null ? {} : { "kubemoot.ai/crew": o.crew ?? "crew" },
    spec: {
      capabilities: o.caps ?? [],
      ...(o.role !== undefined ? { discussRole: o.role } : {}),
    },
    ...(o.scheduling ? { status: { scheduling: o.scheduling } } : {}),
  };
}

export interface PolicyOpts {
  rules?: SchedulingRule[];
  qualityBias?: Record<string, string>;
  spread?: TopologySpread;
  crewRef?: string;
  archetypeRef?: string;
  namespace?: string;
}

export function policy(name: string, o: PolicyOpts = {}): CrewSchedulingPolicy {
  return {
    namespace: o.namespace ?? "crew",
    name,
    spec: {
      crewRef: o.crewRef ?? "crew",
      archetypeRef: o.archetypeRef ?? "consent-3",
      qualityBias: o.qualityBias ?? {},
      rules: o.rules ?? [],
      ...(o.spread ? { topologySpread: o.spread } : {}),
    },
  };
}

export function snapshot(parts: Partial<ClusterSnapshot>): ClusterSnapshot {
  return {
    models: parts.models ?? [],
    providers: parts.providers ?? [],
    agents: parts.agents ?? [],
    policies: parts.policies ?? [],
    archetypes: parts.archetypes ?? [],
  };
}

/** Labels of a qwen3 model of the given size and latency class, with tool calling. */
export function qwen(params: string, latencyClass: "low" | "medium" | "high"): Labels {
  return { family: "qwen3", params, latencyClass, "capability/tool-calling": "true" };
}

/** A phase context for plugin tests: a rule compiled from `rule`, no bias unless given. */
export function phaseContext(o: {
  phase?: string;
  rule?: Omit<SchedulingRule, "phase">;
  agent?: Agent;
  bias?: number;
  strategy?: "spread" | "binpack";
  concurrencyFactor?: number;
  evictionOverheadMiB?: number;
  bound?: Record<string, number>;
}): PhaseContext {
  const phase = o.phase ?? "mulling";
  const compiled = compilePolicy(policy("p", { rules: [{ phase, ...(o.rule ?? {}) }] }), new Map());
  return {
    phase,
    rule: ruleFor(compiled, phase),
    agent: o.agent ?? agent("a"),
    bias: o.bias,
    strategy: o.strategy ?? "spread",
    concurrencyFactor: o.concurrencyFactor ?? 8,
    evictionOverheadMiB: o.evictionOverheadMiB ?? 0,
    boundTo: (p) => o.bound?.[p.name] ?? 0,
  };
}
