// The plugin framework, after kube-scheduler's: filter plugins decide feasibility of one
// (Model, ModelProvider) pair and return a status; score plugins each add one term. The
// binder composes them over a per-phase context; every plugin is a pure function.
import type { CompiledRule } from "./policy.js";
import type { Agent, CapacityStrategy, Model, ModelProvider } from "./types.js";

/** A Model and the provider its providerRef resolves to from the agent's namespace. */
export interface Pair {
  model: Model;
  provider: ModelProvider | undefined;
}

export interface FeasiblePair extends Pair {
  provider: ModelProvider;
}

export interface PhaseContext {
  phase: string;
  rule: CompiledRule;
  agent: Agent;
  /** The agent's effective quality bias; undefined: no bias term. */
  bias: number | undefined;
  strategy: CapacityStrategy;
  concurrencyFactor: number;
  evictionOverheadMiB: number;
  /** Agents already bound to this provider in this phase (earlier in this pass). */
  boundTo(provider: ModelProvider): number;
}

export type FilterStatus = { ok: true } | { ok: false; plugin: string; reason: string };

export interface FilterPlugin {
  name: string;
  filter(ctx: PhaseContext, pair: Pair): FilterStatus;
}

export interface ScorePlugin {
  name: string;
  score(ctx: PhaseContext, pair: FeasiblePair): number;
}

export const OK: FilterStatus = { ok: true };

export function fail(plugin: string, reason: string): FilterStatus {
  return { ok: false, plugin, reason };
}
