// The status the operator wants on each object, and the merge patch (restricted to the status
// fields the operator owns) that gets it there. No patch when nothing changed.
//
// - Agent:                status.scheduling, and the Scheduled condition (other condition
//                         types, and other status fields such as `ready`, are left alone);
// - CrewSchedulingPolicy: the Valid and Scheduled conditions, unknownPhases, agents,
//                         unschedulableAgents, observedGeneration;
// - ModelProvider:        status.capacity.agentCount (agents bound to it, either phase), and,
//                         when the publisher has probed it: ready, lastProbedAt and the rest of
//                         capacity (vramTotalMiB, vramUsedMiB, maxParallel, contextLength,
//                         loadedModels). A probe that changes nothing but lastProbedAt is
//                         written at most every `probedAtRefreshMs` (default 60 s), so that
//                         frequent probes do not turn into a status write each. And the
//                         EngineMatches condition: False (reason EngineMismatch) while the
//                         provider answers as another engine than spec.engine; True again once
//                         it answers as declared. It is written only once a mismatch has been
//                         seen, so a provider that was always right has no such condition.
import type {
  AgentResult,
  Condition,
  ModelProvider,
  PolicyResult,
  ProviderCapacity,
} from "../../binding/index.js";
import type { ProviderState } from "../../core/index.js";
import type { KubeObject } from "./client.js";
import { isPlainObject, type JsonValue, mergePatchDiff, toJson } from "./merge-patch.js";

export const DEFAULT_PROBED_AT_REFRESH_MS = 60_000;

function statusOf(o: KubeObject | undefined): Record<string, unknown> {
  const s = toJson(o?.status);
  return isPlainObject(s) ? s : {};
}

function pick(o: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/** Current conditions with ours replacing those of the same type; others kept in place. */
export function mergeConditions(current: unknown, ours: readonly Condition[]): unknown[] {
  const list = Array.isArray(current) ? current : [];
  const byType = new Map(ours.map((c) => [c.type, c]));
  const out: unknown[] = [];
  const done = new Set<string>();
  for (const c of list) {
    const type = isPlainObject(c) && typeof c.type === "string" ? c.type : undefined;
    if (type !== undefined && byType.has(type)) {
      if (!done.has(type)) out.push(byType.get(type));
      done.add(type);
    } else out.push(c);
  }
  for (const c of ours) if (!done.has(c.type)) out.push(c);
  return out;
}

/** `{status: …}` for the Agent, or undefined when it already holds the result. */
export function agentStatusPatch(current: KubeObject, a: AgentResult): { status: JsonValue } | undefined {
  const status = statusOf(current);
  const desired = {
    scheduling: a.status.scheduling,
    conditions: mergeConditions(status.conditions, a.status.conditions),
  };
  const diff = mergePatchDiff(pick(status, ["scheduling", "conditions"]), desired);
  return diff === undefined ? undefined : { status: diff };
}

export function policyStatusPatch(current: KubeObject, p: PolicyResult): { status: JsonValue } | undefined {
  const status = statusOf(current);
  const generation = current.metadata?.generation;
  const desired = {
    conditions: mergeConditions(status.conditions, p.status.conditions),
    unknownPhases: p.unknownPhases,
    agents: p.agents,
    unschedulableAgents: p.unschedulableAgents,
    ...(typeof generation === "number" ? { observedGeneration: generation } : {}),
  };
  const keys = ["conditions", "unknownPhases", "agents", "unschedulableAgents", "observedGeneration"];
  const diff = mergePatchDiff(pick(status, keys), desired);
  return diff === undefined ? undefined : { status: diff };
}

/** Agents bound to each provider (`<ns>/<name>`, ns empty for cluster scope), either phase. */
export function agentCounts(agents: readonly AgentResult[]): Map<string, number> {
  const sets = new Map<string, Set<string>>();
  for (const a of agents) {
    for (const b of [a.phases.mulling, a.phases.triage]) {
      if (!b) continue;
      const k = `${b.providerNamespace ?? ""}/${b.provider}`;
      const s = sets.get(k) ?? new Set<string>();
      s.add(a.key);
      sets.set(k, s);
    }
  }
  return new Map([...sets.entries()].map(([k, s]) => [k, s.size]));
}

const PROBED_CAPACITY = [
  "vramTotalMiB",
  "vramUsedMiB",
  "maxParallel",
  "contextLength",
  "loadedModels",
] as const;

export const ENGINE_MATCHES = "EngineMatches";

/** What the publisher found of a provider's engine (absent mismatch: it answers as declared). */
export interface EngineCheck {
  mismatch: { declared: string; detected: string } | undefined;
  now: Date;
}

function readConditions(v: unknown): Condition[] {
  return Array.isArray(v)
    ? v.filter((c): c is Condition => isPlainObject(c) && typeof c.type === "string")
    : [];
}

/** The EngineMatches condition to hold, or undefined when none needs writing. */
function engineCondition(current: unknown, endpoint: string, check: EngineCheck): Condition | undefined {
  const previous = readConditions(current);
  const m = check.mismatch;
  if (!m && !previous.some((c) => c.type === ENGINE_MATCHES)) return undefined;
  const next: Omit<Condition, "lastTransitionTime"> = m
    ? {
        type: ENGINE_MATCHES,
        status: "False",
        reason: "EngineMismatch",
        message: `declared engine ${m.declared}, but ${m.detected} answers at ${endpoint}`,
      }
    : {
        type: ENGINE_MATCHES,
        status: "True",
        reason: "EngineMatches",
        message: "the provider answers as its declared engine",
      };
  // Kubernetes style: the transition time stays while the status does not change.
  const prev = previous.find((c) => c.type === ENGINE_MATCHES);
  const lastTransitionTime =
    prev && prev.status === next.status ? prev.lastTransitionTime : check.now.toISOString();
  return { ...next, lastTransitionTime };
}

export function providerStatusPatch(
  current: KubeObject,
  overlaid: ModelProvider | undefined,
  state: ProviderState | undefined,
  agentCount: number,
  probedAtRefreshMs = DEFAULT_PROBED_AT_REFRESH_MS,
  engine?: EngineCheck,
): { status: JsonValue } | undefined {
  const status = statusOf(current);
  const curCap = isPlainObject(status.capacity) ? status.capacity : {};
  const capacity: Record<string, unknown> = { ...curCap, agentCount };
  if (state && overlaid?.status.capacity) {
    const probed: ProviderCapacity = overlaid.status.capacity;
    for (const k of PROBED_CAPACITY) {
      if (probed[k] !== undefined) capacity[k] = probed[k];
    }
  }
  const desired: Record<string, unknown> = { capacity };
  const keys = ["capacity"];
  if (state) {
    desired.ready = state.ready === true;
    keys.push("ready");
    if (state.lastProbedAt) {
      desired.lastProbedAt = state.lastProbedAt;
      keys.push("lastProbedAt");
    }
    const engineCond = engine ? engineCondition(status.conditions, state.endpoint, engine) : undefined;
    if (engineCond) {
      desired.conditions = mergeConditions(status.conditions, [engineCond]);
      keys.push("conditions");
    }
  }
  const diff = mergePatchDiff(pick(status, keys), desired);
  if (diff === undefined) return undefined;
  if (onlyProbedAtMoved(diff, status.lastProbedAt, desired.lastProbedAt, probedAtRefreshMs)) return undefined;
  return { status: diff };
}

function onlyProbedAtMoved(diff: JsonValue, before: unknown, after: unknown, refreshMs: number): boolean {
  if (!isPlainObject(diff) || Object.keys(diff).length !== 1 || !("lastProbedAt" in diff)) return false;
  if (typeof before !== "string" || typeof after !== "string") return false;
  const a = Date.parse(before);
  const b = Date.parse(after);
  return Number.isFinite(a) && Number.isFinite(b) && b - a < refreshMs;
}
